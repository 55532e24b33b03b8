import type { SessionKey } from "../records/session-record.js";
import type { UsageEntry } from "../records/usage-entry.js";

/** What `sumUsage` groups a principal's usage by (besides provider and model, which price each group). */
type UsageGrouping = "day" | "model" | "session";

export interface SumUsageInput {
  principal: string;
  /**
   * Whole UTC days, read from the daily roll-ups: the calls of the days from `from` on, before `to` (both UTC
   * midnights).
   */
  from: Date;
  to: Date;
  groupBy: UsageGrouping;
  /**
   * With `groupBy: "session"`, a page of sessions in id order (the calls outside any session, key "", first):
   * the `limit` first with usage in the range whose key is after `after`.
   */
  page?: { after?: string; limit: number };
}

/** A session's usage: its calls that started at or after `since` (when the session under this key was made). */
export interface SumSessionUsageInput extends SessionKey {
  since: Date;
}

/**
 * The usage of one group of a principal's model calls: its `key` (the UTC date `YYYY-MM-DD` the calls started
 * on, the model, or the session id, "" for calls outside any session), and the provider and model of its calls
 * (one group per pair).
 */
export interface UsageSum extends Pick<UsageEntry, "provider" | "model"> {
  key: string;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  llmCalls: number;
}

/**
 * What model calls cost in tokens, per principal: kept once per call (a turn's calls with their trace, by
 * `TurnStore`; calls outside a turn here) with daily roll-ups, and summed. It outlives the sessions.
 */
export interface UsageStore {
  /**
   * Keeps the usage of calls made outside a turn's trace (embeddings), each once under its `callId` (one kept
   * already changes nothing), with the daily roll-ups, atomically.
   */
  recordUsage(entries: readonly UsageEntry[]): Promise<void>;
  /**
   * The principal's usage over whole UTC days, summed by group from the daily roll-ups (see SumUsageInput,
   * UsageSum): never a read of every call. In no set order.
   */
  sumUsage(input: SumUsageInput): Promise<UsageSum[]>;
  /** A session's usage by model (the key), from its own calls (see SumSessionUsageInput). In no set order. */
  sumSessionUsage(input: SumSessionUsageInput): Promise<UsageSum[]>;
}
