import type { RagScopeCondition } from "@aptix/contracts";
import type { ContextRetriever, RetrievalQuery } from "../ports/context-retriever.js";
import type { RagChunk } from "../records/rag-chunk.js";

export interface InMemoryContextRetrieverOptions {
  /** The most chunks one retrieval returns (default 8); 0 always returns none. */
  maxChunks?: number;
}

/**
 * A `ContextRetriever` over a fixed list of chunks, for tests and development. It does no ranking and
 * ignores the instruction, principal and session: a retrieval returns, in insertion order and at most
 * `maxChunks`, the chunks whose `metadata` satisfies every `ragScope` condition (an empty scope matches all):
 *
 * - `==`: `metadata[key]` equals one of `values`;
 * - `!=`: `metadata[key]` equals none of `values` (a missing key is not equal, so it matches);
 * - `contains`: `metadata[key]` contains one of `values` as a substring;
 * - `does_not_contain`: `metadata[key]` contains none of `values` (a missing key matches).
 *
 * A chunk without `metadata` is matched as if its metadata were empty. Chunks are returned as copies.
 */
export class InMemoryContextRetriever implements ContextRetriever {
  readonly #chunks: RagChunk[];
  readonly #maxChunks: number;

  constructor(chunks: readonly RagChunk[] = [], options: InMemoryContextRetrieverOptions = {}) {
    const maxChunks = options.maxChunks ?? 8;
    if (!Number.isInteger(maxChunks) || maxChunks < 0) {
      throw new RangeError(`maxChunks must be a non-negative integer, got ${maxChunks}`);
    }
    this.#chunks = chunks.map((chunk) => structuredClone(chunk));
    this.#maxChunks = maxChunks;
  }

  /** Adds a chunk after the ones already held. */
  add(chunk: RagChunk): void {
    this.#chunks.push(structuredClone(chunk));
  }

  async retrieve(query: RetrievalQuery): Promise<RagChunk[]> {
    const found: RagChunk[] = [];
    for (const chunk of this.#chunks) {
      if (found.length >= this.#maxChunks) break;
      if (query.scope.every((condition) => matchesCondition(chunk.metadata ?? {}, condition))) {
        found.push(structuredClone(chunk));
      }
    }
    return found;
  }
}

/** Whether one chunk's metadata satisfies one `ragScope` condition (see `InMemoryContextRetriever`). */
export function matchesCondition(
  metadata: Readonly<Record<string, string>>,
  condition: RagScopeCondition,
): boolean {
  const value = Object.hasOwn(metadata, condition.key) ? metadata[condition.key] : undefined;
  switch (condition.operator) {
    case "==":
      return value !== undefined && condition.values.includes(value);
    case "!=":
      return value === undefined || !condition.values.includes(value);
    case "contains":
      return value !== undefined && condition.values.some((part) => value.includes(part));
    case "does_not_contain":
      return value === undefined || !condition.values.some((part) => value.includes(part));
  }
}
