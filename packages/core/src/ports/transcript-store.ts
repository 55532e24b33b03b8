import type { CompactionRecord } from "../records/compaction-record.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { SessionKey } from "../records/session-record.js";
import type { TranscriptItem } from "../records/transcript-item.js";

export interface PruneTracesInput {
  /** LLM calls that started before this. */
  startedBefore: Date;
  limit: number;
}

/**
 * A session's transcript, compactions and LLM call traces, as read back. They are written with the lease, by
 * `TurnStore.recordLlmCall` and a lease-guarded `TurnStore.write`, and removed with their session.
 */
export interface TranscriptStore {
  /** The transcript items from position `from` (default 0) up to `length`, in order: what a replay sends. */
  loadTranscript(key: SessionKey, length: number, from?: number): Promise<TranscriptItem[]>;
  /** The session's compactions, oldest first. */
  listCompactions(key: SessionKey): Promise<CompactionRecord[]>;
  listLlmCalls(key: SessionKey, turnId: string): Promise<LlmCallRecord[]>;
  /**
   * The trace retention: sets `request`, `providerRequest` and `providerResponse` to null on up to `limit` LLM
   * calls started before `startedBefore` that still have a request, keeping the rest (response, error, timings);
   * answers how many it pruned.
   */
  pruneTraces(input: PruneTracesInput): Promise<number>;
}
