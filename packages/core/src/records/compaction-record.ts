/** Why a conversation was compacted: past the threshold, on a provider's overflow answer, or asked for. */
export type CompactionReason = "threshold" | "overflow" | "manual";

/**
 * A compaction of a session's conversation (docs/context-window.md): the summary that replaced its turns for the provider,
 * kept with the session. The transcript keeps every item; the compacted chain starts at `fromPosition`.
 */
export interface CompactionRecord {
  principal: string;
  sessionId: string;
  /** The turn it happened in, or for one asked for between turns (`POST …/compact`), the session's last turn. */
  turnId: string;
  reason: CompactionReason;
  summary: string;
  /** The estimate of the next call before compacting, and of the compacted chain with what it sends next. */
  tokensBefore: number;
  tokensAfter: number;
  /** The transcript position of the compacted chain's first item (its cursor's `replayFrom`). */
  fromPosition: number;
  createdAt: Date;
}
