import type { InvokeFailure, InvokeSuccess } from "@aptix/contracts";
import type { LlmRequest } from "../records/llm-request.js";
import type { LlmCallTrace, LlmResponse } from "../records/llm-response.js";

export interface LlmCallOptions {
  /** Streams assistant text as it arrives; the full answer still comes back as the result. */
  onTextDelta?: (delta: string) => void;
  signal?: AbortSignal;
}

/**
 * A failed call: PROVIDER_ERROR whose `details` carry the provider's name, HTTP status and error code, never a
 * provider response or request id (docs/security.md); those go in `trace`, which only the turn's trace keeps.
 */
export interface LlmCallFailure extends InvokeFailure {
  trace?: LlmCallTrace;
}

export type LlmCallResult = InvokeSuccess<LlmResponse> | LlmCallFailure;

/**
 * One LLM provider behind one call: a composed request in, a normalized response out. Failures are
 * returned, never thrown (LlmCallFailure).
 */
export interface LlmProvider {
  /** Matches `ConversationContext.provider`. */
  readonly id: string;
  /** True when the provider stores responses and a call may continue from `previous_response`. */
  readonly storesResponses: boolean;
  call(request: LlmRequest, options?: LlmCallOptions): Promise<LlmCallResult>;
  /**
   * Deletes a response the provider stored (a deleted session's): `deleted`, also when the provider no longer
   * had it; `failed` with why (never thrown), to try again later. Only a provider that stores responses has it.
   */
  deleteStoredResponse?(responseId: string): Promise<{ deleted: true } | { deleted: false; reason: string }>;
}

/**
 * The provider no longer knows the response the call continued from (OpenAI `previous_response_not_found`).
 * Core recovers by replaying the session's transcript instead of failing the turn.
 */
export const CONTINUATION_LOST = "continuation_lost";

export function isContinuationLost(failure: InvokeFailure): boolean {
  return failure.errors.some((error) => error.details?.reason === CONTINUATION_LOST);
}

/**
 * The provider refused the call as larger than the model's context window (OpenAI `context_length_exceeded`,
 * Anthropic's "prompt is too long"). Core compacts the conversation and calls again, once.
 */
export const CONTEXT_OVERFLOW = "context_overflow";

export function isContextOverflow(failure: InvokeFailure): boolean {
  return failure.errors.some((error) => error.details?.reason === CONTEXT_OVERFLOW);
}
