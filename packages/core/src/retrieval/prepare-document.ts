import type { WorkspaceDocument } from "@aptix/contracts";
import type { ContentHashService } from "../ports/content-hash-service.js";
import type { PrepareDocumentInput, PreparedDocument } from "../ports/document-preparation.js";
import { chunkDocument } from "./chunk-document.js";
import { codeSearchText } from "./code-search-text.js";
import { languageOf } from "./language-of.js";

/**
 * A pushed document's language and content hash, and unless the hash equals `storedHash`, its chunks with
 * their code-aware terms (see `DocumentPreparation`). Pure but for `hashes`: worker threads run it as it is.
 * Throws a `RangeError` for chunking bounds the chunker cannot honour.
 */
export function prepareDocument(input: PrepareDocumentInput, hashes: ContentHashService): PreparedDocument {
  const { document } = input;
  const language = languageOf(document.path, document.language);
  const contentHash = hashes.hash(`${documentAttributes(document, language)}\n${document.contents}`);
  if (contentHash === input.storedHash) return { language, contentHash };
  const chunks = chunkDocument({
    path: document.path,
    contents: document.contents,
    language,
    ...input.chunking,
  }).map((chunk) => ({
    startLine: chunk.startLine,
    endLine: chunk.endLine,
    text: chunk.text,
    searchText: codeSearchText(chunk.text),
  }));
  return { language, contentHash, chunks };
}

/**
 * What a chunk keeps besides its text (the language, and what `ragScope` tests), in a canonical form: it is
 * hashed with the contents, so a document re-pushed under another language, repo, tag or metadata value is
 * re-indexed rather than found unchanged with stale attributes.
 */
function documentAttributes(
  document: Pick<WorkspaceDocument, "repo" | "tags" | "metadata">,
  language: string,
): string {
  const metadata = Object.entries(document.metadata ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([language, document.repo ?? null, document.tags ?? [], metadata]);
}
