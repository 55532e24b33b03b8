import type { RetrievedChunk } from "../ports/context-retriever.js";
import type { ProvidedChunk } from "../records/conversation-cursor.js";
import type { RagChunk } from "../records/rag-chunk.js";

/** A fence longer than any backtick run in the content, so code that contains ``` cannot close it early. */
export function fenceFor(content: string): string {
  const longestRun = Math.max(0, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  return "`".repeat(Math.max(3, longestRun + 1));
}

/** Ids are per block (AGN-002): `ctx_1` is the best chunk the block holds. */
export function contextIdOf(index: number): string {
  return `ctx_${index + 1}`;
}

/** Chunks found by a search, best first, as the block's chunks: `ctx_1…ctx_N` in rank order. */
export function rankedRagChunks(
  chunks: readonly Pick<RetrievedChunk, "path" | "startLine" | "endLine" | "language" | "text">[],
): RagChunk[] {
  return chunks.map((chunk, index) => ({
    id: contextIdOf(index),
    path: chunk.path,
    startLine: chunk.startLine,
    endLine: chunk.endLine,
    language: chunk.language,
    content: chunk.text,
  }));
}

/** One `=== CHUNK N ===` section: the chunk's metadata, then its code fenced in its language. */
function formatRagChunk(chunk: RagChunk, position: number): string {
  const fence = fenceFor(chunk.content);
  return [
    `=== CHUNK ${position} ===`,
    `Id: ${chunk.id}`,
    `Path: ${chunk.path}`,
    `Lines: ${chunk.startLine}-${chunk.endLine}`,
    `Language: ${chunk.language}`,
    `${fence}${chunk.language}`,
    chunk.content,
    fence,
  ].join("\n");
}

/**
 * The AGN-002 `[CONTEXT]` block: one `=== CHUNK N ===` section per chunk in rank order, separated by blank
 * lines; when matches were sent earlier in the session's continuation chain, a last line names them
 * (`Previously provided: <path>:<a>-<b>, …`) instead of repeating them. Undefined when there is nothing to
 * say, so the block is omitted rather than sent empty (AGN-003 §3.2).
 */
export function formatRagContextBlock(
  chunks: readonly RagChunk[],
  previouslyProvided: readonly ProvidedChunk[] = [],
): string | undefined {
  if (chunks.length === 0 && previouslyProvided.length === 0) return undefined;
  const parts = chunks.map((chunk, index) => formatRagChunk(chunk, index + 1));
  if (previouslyProvided.length > 0) {
    const named = previouslyProvided.map((chunk) => `${chunk.path}:${chunk.startLine}-${chunk.endLine}`);
    parts.push(`Previously provided: ${named.join(", ")}`);
  }
  return `[CONTEXT]\n\n${parts.join("\n\n")}`;
}
