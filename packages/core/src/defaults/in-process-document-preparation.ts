import type { ContentHashService } from "../ports/content-hash-service.js";
import type { DocumentPreparation } from "../ports/document-preparation.js";
import { prepareDocument } from "../retrieval/prepare-document.js";

/**
 * Prepares documents on the calling thread, blocking it while it cuts: `WorkspaceKnowledge`'s default, for
 * tests and small embedders. The server runs `prepareDocument` in worker threads instead.
 */
export function inProcessDocumentPreparation(hashes: ContentHashService): DocumentPreparation {
  return { prepare: async (input) => prepareDocument(input, hashes) };
}
