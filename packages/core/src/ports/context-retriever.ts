import type { RagScopeCondition, UserTurnRequest } from "@aptix/contracts";
import type { RagChunk } from "../records/rag-chunk.js";

export interface RetrievalQuery {
  principal: string;
  sessionId: string;
  request: UserTurnRequest;
  /** The request's `ragScope`: ANDed, advisory (AGN-034 §4.4). */
  scope: RagScopeCondition[];
}

/** Finds the chunks for a user turn's `[CONTEXT]` block (AGN-002); an empty list omits the block. */
export interface ContextRetriever {
  retrieve(query: RetrievalQuery): Promise<RagChunk[]>;
}
