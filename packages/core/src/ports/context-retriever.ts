import type { RagScopeCondition } from "@aptix/contracts";

/** What a user turn asks its workspace for (docs/knowledge.md, "Turn-time retrieval"). */
export interface RetrievalQuery {
  principal: string;
  /** The session and turn asking: what embedding the query spends is their usage. */
  sessionId: string;
  turnId: string;
  workspaceId: string;
  /** The turn's instruction with its artifacts' paths and names. */
  text: string;
  /** The request's `ragScope`: ANDed filters (AGN-034 §4.4). */
  scope: RagScopeCondition[];
  /** The request's `repo` and `language` hints: matching chunks rank higher, none is filtered out. */
  boost: { repo?: string; language?: string };
  /** The most chunks to return. */
  limit: number;
}

/** One ranked chunk of a workspace document; lines are 1-based and inclusive. */
export interface RetrievedChunk {
  /** The index's id of the chunk: stable until its document changes. */
  chunkId: string;
  path: string;
  startLine: number;
  endLine: number;
  language: string;
  text: string;
  score: number;
}

/**
 * What a retrieval found. `unknown_workspace` and `empty_index` say why nothing could match; `found` with no
 * chunks is "no match". Each omits the `[CONTEXT]` block, and the turn's trace says which it was.
 */
export type Retrieval =
  | { type: "unknown_workspace" }
  | { type: "empty_index" }
  | { type: "found"; chunks: RetrievedChunk[] };

/**
 * Finds the chunks for a user turn's `[CONTEXT]` block (AGN-002), best first. It throws when retrieval itself
 * fails: the turn fails with it rather than run without the context it asked for.
 */
export interface ContextRetriever {
  retrieve(query: RetrievalQuery): Promise<Retrieval>;
}
