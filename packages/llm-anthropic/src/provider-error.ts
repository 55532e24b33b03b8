import Anthropic from "@anthropic-ai/sdk";
import { CONTEXT_OVERFLOW, fail, type LlmCallFailure } from "@aptix/core";

/**
 * PROVIDER_ERROR naming Anthropic, with `details`. The `request-id` header and the error body (which repeats
 * it) go into the trace only: clients never see provider ids.
 */
function anthropicFailure(
  message: string,
  details: Record<string, unknown>,
  providerRequest: unknown,
  answer: { status?: number | undefined; requestId?: string | null | undefined; body?: unknown } = {},
): LlmCallFailure {
  return {
    ...fail("PROVIDER_ERROR", message, { provider: "anthropic", ...details }),
    trace: {
      providerRequest,
      providerResponse: {
        status: answer.status ?? null,
        requestId: answer.requestId ?? null,
        body: answer.body ?? null,
      },
    },
  };
}

/**
 * A failed SDK call as PROVIDER_ERROR, with what an operator needs to chase it: the HTTP status and
 * Anthropic's error `type` (`rate_limit_error`, `overloaded_error`, …) in the details, the `request-id`
 * header in the trace.
 */
export function providerError(error: unknown, providerRequest: unknown): LlmCallFailure {
  if (error instanceof Anthropic.APIConnectionTimeoutError) {
    return anthropicFailure("Anthropic did not answer in time.", { reason: "timeout" }, providerRequest);
  }
  if (error instanceof Anthropic.APIUserAbortError) {
    return anthropicFailure("The call to Anthropic was cancelled.", { reason: "aborted" }, providerRequest);
  }
  if (error instanceof Anthropic.APIConnectionError || isDroppedStream(error)) {
    return anthropicFailure(
      `Could not reach Anthropic: ${messageOf(error)}`,
      { reason: "connection" },
      providerRequest,
    );
  }
  if (error instanceof Anthropic.APIError) {
    // A streamed `event: error` (e.g. `overloaded_error` mid-answer) has a type but no HTTP status.
    const details: Record<string, unknown> = { status: error.status ?? null, type: error.type ?? null };
    if (error.errorCode) details.code = error.errorCode;
    // `message` starts with the status already; `apiMessage` is the body's own message when it had one.
    const said = error.apiMessage ?? error.message.replace(/^\d{3} /, "");
    // The API has no code for it: a 400 whose message says the prompt is too long.
    if (error.status === 400 && /prompt is too long/i.test(said)) details.reason = CONTEXT_OVERFLOW;
    return anthropicFailure(
      `Anthropic answered ${error.status ?? "an error"}: ${said}`,
      details,
      providerRequest,
      {
        status: error.status,
        requestId: error.requestID,
        body: error.error,
      },
    );
  }
  return anthropicFailure(
    `Anthropic's answer could not be read: ${messageOf(error)}`,
    { reason: "malformed" },
    providerRequest,
  );
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
