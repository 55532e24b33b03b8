import type { InvokeFailure, InvokeResult } from "@aptix/contracts";
import type { LlmRequest } from "../records/llm-request.js";
import type { LlmResponse } from "../records/llm-response.js";

export interface LlmCallOptions {
  /** Streams assistant text as it arrives; the full answer still comes back as the result. */
  onTextDelta?: (delta: string) => void;
  signal?: AbortSignal;
}

/**
 * One LLM provider behind one call: a composed request in, a normalized response out. Failures are
 * returned, never thrown: PROVIDER_ERROR with the provider's status, code and request id in `details`.
 */
export interface LlmProvider {
  /** Matches `ConversationContext.provider`. */
  readonly id: string;
  /** True when the provider stores responses and a call may continue from `previous_response`. */
  readonly storesResponses: boolean;
  call(request: LlmRequest, options?: LlmCallOptions): Promise<InvokeResult<LlmResponse>>;
}

/**
 * The provider no longer knows the response the call continued from (OpenAI `previous_response_not_found`).
 * Core recovers by replaying the session's transcript instead of failing the turn.
 */
export const CONTINUATION_LOST = "continuation_lost";

export function isContinuationLost(failure: InvokeFailure): boolean {
  return failure.errors.some((error) => error.details?.reason === CONTINUATION_LOST);
}
