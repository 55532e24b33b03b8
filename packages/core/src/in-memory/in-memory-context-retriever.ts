import type { RagScopeCondition } from "@aptix/contracts";
import type {
  ContextRetriever,
  Retrieval,
  RetrievalQuery,
  RetrievedChunk,
} from "../ports/context-retriever.js";

/** A chunk an `InMemoryContextRetriever` holds: a retrieved chunk but for its score, with `ragScope` attributes. */
export interface FixedContextChunk extends Omit<RetrievedChunk, "score"> {
  /** Attributes `ragScope` conditions are matched against (e.g. repo, language, kind). */
  metadata?: Record<string, string>;
}

export interface InMemoryContextRetrieverOptions {
  /** The most chunks one retrieval returns (default 8); 0 always returns none. */
  maxChunks?: number;
}

/**
 * A `ContextRetriever` over a fixed list of chunks, for tests of composition. It does no ranking and ignores the
 * text, principal and workspace (every workspace holds the same chunks): a retrieval returns, in insertion order
 * and at most `maxChunks` (and the query's `limit`), the chunks whose `metadata` satisfies every `ragScope`
 * condition (an empty scope matches all), scored by position (the first highest):
 *
 * - `==`: `metadata[key]` equals one of `values`;
 * - `!=`: `metadata[key]` equals none of `values` (a missing key is not equal, so it matches);
 * - `contains`: `metadata[key]` contains one of `values` as a substring;
 * - `does_not_contain`: `metadata[key]` contains none of `values` (a missing key matches).
 *
 * A chunk without `metadata` is matched as if its metadata were empty. With no chunks at all it answers
 * `empty_index`. Chunks are returned as copies, without their metadata. For ranked retrieval over pushed
 * documents, use `WorkspaceKnowledge` over an `InMemoryWorkspaceIndex`.
 */
export class InMemoryContextRetriever implements ContextRetriever {
  readonly #chunks: FixedContextChunk[];
  readonly #maxChunks: number;

  constructor(chunks: readonly FixedContextChunk[] = [], options: InMemoryContextRetrieverOptions = {}) {
    const maxChunks = options.maxChunks ?? 8;
    if (!Number.isInteger(maxChunks) || maxChunks < 0) {
      throw new RangeError(`maxChunks must be a non-negative integer, got ${maxChunks}`);
    }
    this.#chunks = chunks.map((chunk) => structuredClone(chunk));
    this.#maxChunks = maxChunks;
  }

  /** Adds a chunk after the ones already held. */
  add(chunk: FixedContextChunk): void {
    this.#chunks.push(structuredClone(chunk));
  }

  async retrieve(query: RetrievalQuery): Promise<Retrieval> {
    if (this.#chunks.length === 0) return { type: "empty_index" };
    const limit = Math.min(this.#maxChunks, query.limit);
    const found: RetrievedChunk[] = [];
    for (const { metadata, ...chunk } of this.#chunks) {
      if (found.length >= limit) break;
      if (query.scope.every((condition) => matchesCondition(metadata ?? {}, condition))) {
        found.push({ ...structuredClone(chunk), score: 0 });
      }
    }
    return {
      type: "found",
      chunks: found.map((chunk, index) => ({ ...chunk, score: found.length - index })),
    };
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
