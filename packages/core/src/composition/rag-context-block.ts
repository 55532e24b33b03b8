import type { RagChunk } from "../records/rag-chunk.js";

/** A fence longer than any backtick run in the content, so code that contains ``` cannot close it early. */
export function fenceFor(content: string): string {
  const longestRun = Math.max(0, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  return "`".repeat(Math.max(3, longestRun + 1));
}

/**
 * The AGN-002 `[CONTEXT]` block: one `=== CHUNK N ===` section per chunk with its metadata and fenced
 * code. Undefined when there are no chunks, so the block is omitted rather than sent empty (AGN-003 §3.2).
 */
export function formatRagContextBlock(chunks: readonly RagChunk[]): string | undefined {
  if (chunks.length === 0) return undefined;
  const sections = chunks.map((chunk, index) => {
    const fence = fenceFor(chunk.content);
    return [
      `=== CHUNK ${index + 1} ===`,
      `Id: ${chunk.id}`,
      `Path: ${chunk.path}`,
      `Lines: ${chunk.startLine}-${chunk.endLine}`,
      `Language: ${chunk.language}`,
      `${fence}${chunk.language}`,
      chunk.content,
      fence,
    ].join("\n");
  });
  return `[CONTEXT]\n\n${sections.join("\n\n")}`;
}
