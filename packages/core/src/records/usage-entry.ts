import type { LlmCallRecord } from "./llm-call-record.js";

/**
 * The usage of one successful LLM call, as the store keeps it for what was spent (DESIGN §17): tokens by kind,
 * with the provider and model that price them. Kept apart from the call's trace, so a deleted session's calls
 * still count against their principal's budget and usage.
 */
export interface UsageEntry {
  principal: string;
  sessionId: string;
  turnId: string;
  /** The call's `index` in its turn. */
  index: number;
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
