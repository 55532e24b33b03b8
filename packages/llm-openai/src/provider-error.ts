import { CONTINUATION_LOST, fail, type InvokeFailure } from "@aptix/core";
import OpenAI from "openai";

/**
 * A failed SDK call as PROVIDER_ERROR, with what an operator needs to chase it (status, code, request id).
 * `previous_response_not_found` is marked as a lost continuation, which core recovers from by replaying.
 */
export function providerError(error: unknown): InvokeFailure {
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return fail("PROVIDER_ERROR", "OpenAI did not answer in time.", {
      provider: "openai",
      reason: "timeout",
    });
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return fail("PROVIDER_ERROR", `Could not reach OpenAI: ${error.message}`, {
      provider: "openai",
      reason: "connection",
    });
  }
  if (error instanceof OpenAI.APIError) {
    const details: Record<string, unknown> = {
      provider: "openai",
      status: error.status ?? null,
      code: error.code ?? null,
      type: error.type ?? null,
      requestId: error.requestID ?? null,
    };
    if (error.code === "previous_response_not_found") details.reason = CONTINUATION_LOST;
    return fail("PROVIDER_ERROR", `OpenAI answered ${error.status ?? "an error"}: ${error.message}`, details);
  }
  const message = error instanceof Error ? error.message : String(error);
  return fail("PROVIDER_ERROR", `OpenAI's answer could not be read: ${message}`, {
    provider: "openai",
    reason: "malformed",
  });
}
