import { describe, expect, it } from "vitest";
import { inProcessDocumentPreparation } from "../../src/defaults/in-process-document-preparation.js";
import { sha256ContentHashService } from "../../src/defaults/sha256-content-hash-service.js";
import { chunkDocument } from "../../src/retrieval/chunk-document.js";
import { codeSearchText } from "../../src/retrieval/code-search-text.js";
import { prepareDocument } from "../../src/retrieval/prepare-document.js";

const document = {
  path: "src/billing/invoice.ts",
  contents:
    "export function invoiceTotal(lines: number[]) {\n  return lines.length;\n}\n\nexport const taxRate = 0.2;",
  tags: ["billing"],
};

describe("prepareDocument", () => {
  it("cuts a changed document into the chunker's chunks, each with its code-aware terms", () => {
    const prepared = prepareDocument({ document, chunking: { maxLines: 2 } }, sha256ContentHashService);
    const chunks = chunkDocument({ path: document.path, contents: document.contents, maxLines: 2 });
    expect(prepared).toEqual({
      language: "typescript",
      contentHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      chunks: chunks.map(({ startLine, endLine, text }) => ({
        startLine,
        endLine,
        text,
        searchText: codeSearchText(text),
      })),
    });
  });

  it("does not cut a document whose hash is the one stored", () => {
    const { contentHash } = prepareDocument({ document }, sha256ContentHashService);
    expect(prepareDocument({ document, storedHash: contentHash }, sha256ContentHashService)).toEqual({
      language: "typescript",
      contentHash,
    });
  });

  it("hashes the attributes a chunk keeps with the contents", () => {
    const hashOf = (changed: object) =>
      prepareDocument({ document: { ...document, ...changed } }, sha256ContentHashService).contentHash;
    const original = hashOf({});
    expect(hashOf({ metadata: {} })).toBe(original);
    for (const changed of [{ tags: ["other"] }, { repo: "shop" }, { language: "javascript" }]) {
      expect(hashOf(changed)).not.toBe(original);
    }
  });

  it("refuses chunking bounds the chunker cannot honour, in process as the chunker does", async () => {
    await expect(
      inProcessDocumentPreparation(sha256ContentHashService).prepare({ document, chunking: { maxLines: 0 } }),
    ).rejects.toThrow(RangeError);
  });
});
