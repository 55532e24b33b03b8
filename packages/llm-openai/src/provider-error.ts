import { CONTINUATION_LOST, fail, type InvokeFailure } from "@aptix/core";
import OpenAI from "openai";

/** What is known of an HTTP answer once its headers arrived: kept for failures found in its body. */
export interface ReceivedAnswer {
  status: number;
  /** The `x-request-id` header, what OpenAI asks for when a request is reported. */
  requestId: string | null;
}

/** An `error` event in a response stream: OpenAI failed the response after answering 200. */
export class StreamErrorEvent extends Error {
  constructor(
    readonly code: string | null,
    readonly providerMessage: string,
  ) {
    super(`stream error ${code ?? ""}: ${providerMessage}`);
    this.name = "StreamErrorEvent";
  }
}

/**
 * Whether an OpenAI error code says the `previous_response_id` is gone (`previous_response_not_found`), however
 * it arrived: an HTTP error, a stream's `error` event or a failed Response. Such a failure is marked as a lost
 * continuation (`details.reason`), which core recovers from by replaying the transcript.
 */
export function isLostContinuation(code: unknown): boolean {
  return code === "previous_response_not_found";
}

/**
 * A failed SDK call as PROVIDER_ERROR, with what an operator needs to chase it (status, code, request id;
 * from `received` when the failure came after the headers). A lost continuation is marked as such (see
 * isLostContinuation).
 */
export function providerError(error: unknown, received?: ReceivedAnswer): InvokeFailure {
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return fail("PROVIDER_ERROR", "OpenAI did not answer in time.", {
      provider: "openai",
      reason: "timeout",
      ...received,
    });
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return fail("PROVIDER_ERROR", `Could not reach OpenAI: ${error.message}`, {
      provider: "openai",
      reason: "connection",
      ...received,
    });
  }
  if (error instanceof OpenAI.APIError) {
    // An error object inside a 200 stream has no status of its own.
    const status = error.status ?? received?.status;
    const details: Record<string, unknown> = {
      provider: "openai",
      status: status ?? null,
      code: error.code ?? null,
      type: error.type ?? null,
      requestId: error.requestID ?? received?.requestId ?? null,
    };
    if (isLostContinuation(error.code)) details.reason = CONTINUATION_LOST;
    return fail("PROVIDER_ERROR", `OpenAI answered ${status ?? "an error"}: ${error.message}`, details);
  }
  if (error instanceof StreamErrorEvent) {
    return fail("PROVIDER_ERROR", `OpenAI's stream reported an error: ${error.providerMessage}`, {
      provider: "openai",
      reason: isLostContinuation(error.code) ? CONTINUATION_LOST : "stream_error",
      code: error.code,
      message: error.providerMessage,
      ...received,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return fail("PROVIDER_ERROR", `OpenAI's answer could not be read: ${message}`, {
    provider: "openai",
    reason: "malformed",
    ...received,
  });
}
