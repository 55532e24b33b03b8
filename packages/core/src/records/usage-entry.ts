import type { LlmCallRecord } from "./llm-call-record.js";

/**
 * The usage of one successful model call, as the store keeps it for what was spent: tokens by kind, with the
 * provider and model that price them. Kept apart from the call's trace, so a deleted session's calls still count
 * against their principal's budget and usage. Written once under `callId` and never changed: a session deleted
 * and made again under the same ids adds its calls to the old ones.
 */
export interface UsageEntry {
  /** Unique to the call: keeping an entry again under it changes nothing. */
  callId: string;
  principal: string;
  /** The session the call served; null for a call outside any session (embedding pushed documents). */
  sessionId: string | null;
  /** The turn the call served; null outside a turn. */
  turnId: string | null;
  /** The call's `index` in its turn; null outside a turn. */
  index: number | null;
  provider: string;
  model: string;
  /** Every input token, those read from the provider's prompt cache included. */
  inputTokens: number;
  /** The part of `inputTokens` read from the prompt cache. */
  cachedInputTokens: number;
  /** Every output token, reasoning included. */
  outputTokens: number;
  /** The part of `outputTokens` spent on hidden reasoning. */
  reasoningTokens: number;
  /** When the call started: the time its usage counts at. */
  startedAt: Date;
}

/** The usage a call adds: none for a failed call (the provider reported none), or one whose request was pruned. */
export function usageOf(call: LlmCallRecord): UsageEntry | undefined {
  if (call.response === null || call.request === null) return undefined;
  const { usage } = call.response;
  return {
    callId: call.callId,
    principal: call.principal,
    sessionId: call.sessionId,
    turnId: call.turnId,
    index: call.index,
    provider: call.provider ?? "unknown",
    model: call.request.model,
    inputTokens: usage.inputTokens,
    cachedInputTokens: usage.cachedInputTokens ?? 0,
    outputTokens: usage.outputTokens,
    reasoningTokens: usage.reasoningTokens ?? 0,
    startedAt: call.startedAt,
  };
}
