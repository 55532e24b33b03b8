import Anthropic from "@anthropic-ai/sdk";
import { fail, type InvokeFailure } from "@aptix/core";

/**
 * A failed SDK call as PROVIDER_ERROR, with what an operator needs to chase it: the HTTP status, Anthropic's
 * error `type` (`rate_limit_error`, `overloaded_error`, …) and the `request-id` header.
 */
export function providerError(error: unknown): InvokeFailure {
  if (error instanceof Anthropic.APIConnectionTimeoutError) {
    return fail("PROVIDER_ERROR", "Anthropic did not answer in time.", {
      provider: "anthropic",
      reason: "timeout",
    });
  }
  if (error instanceof Anthropic.APIUserAbortError) {
    return fail("PROVIDER_ERROR", "The call to Anthropic was cancelled.", {
      provider: "anthropic",
      reason: "aborted",
    });
  }
  if (error instanceof Anthropic.APIConnectionError || isDroppedStream(error)) {
    return fail("PROVIDER_ERROR", `Could not reach Anthropic: ${messageOf(error)}`, {
      provider: "anthropic",
      reason: "connection",
    });
  }
  if (error instanceof Anthropic.APIError) {
    // A streamed `event: error` (e.g. `overloaded_error` mid-answer) has a type but no HTTP status.
    const details: Record<string, unknown> = {
      provider: "anthropic",
      status: error.status ?? null,
      type: error.type ?? null,
      requestId: error.requestID ?? null,
    };
    if (error.errorCode) details.code = error.errorCode;
    // `message` starts with the status already; `apiMessage` is the body's own message when it had one.
    const said = error.apiMessage ?? error.message.replace(/^\d{3} /, "");
    return fail("PROVIDER_ERROR", `Anthropic answered ${error.status ?? "an error"}: ${said}`, details);
  }
  return fail("PROVIDER_ERROR", `Anthropic's answer could not be read: ${messageOf(error)}`, {
    provider: "anthropic",
    reason: "malformed",
  });
}

/**
 * A connection that dies while a streamed answer is being read: fetch rejects the body read with
 * `TypeError: terminated` (undici), outside the SDK's connection-error handling; the SDK's MessageStream
 * wraps it in an AnthropicError whose `cause` is that TypeError.
 */
function isDroppedStream(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (current instanceof TypeError && current.message === "terminated") return true;
    if (typeof code === "string" && /^(ECONNRESET|EPIPE|UND_ERR_SOCKET)$/.test(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
