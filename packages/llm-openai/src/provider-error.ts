import { CONTEXT_OVERFLOW, CONTINUATION_LOST, fail, type LlmCallFailure } from "@aptix/core";
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
function isLostContinuation(code: unknown): boolean {
  return code === "previous_response_not_found";
}

/** What core is told of an error code it acts on: a lost continuation, or a request past the context window. */
export function reasonOf(code: unknown): string | undefined {
  if (isLostContinuation(code)) return CONTINUATION_LOST;
  return code === "context_length_exceeded" ? CONTEXT_OVERFLOW : undefined;
}

/** What a failed call sent and got: the trace keeps it. A null status: an error the SDK read without one. */
interface FailedCall {
  providerRequest: unknown;
  received: { status: number | null; requestId: string | null } | undefined;
  body?: unknown;
}

/**
 * PROVIDER_ERROR with the provider, the HTTP status (once known) and `details`. OpenAI's request id and the
 * answer's body (a failed Response holds its id) go into the trace only: clients never see provider ids.
 */
export function openAIFailure(
  message: string,
  details: Record<string, unknown>,
  { providerRequest, received, body = null }: FailedCall,
): LlmCallFailure {
  return {
    ...fail("PROVIDER_ERROR", message, {
      provider: "openai",
      ...(received ? { status: received.status } : {}),
      ...details,
    }),
    trace: {
      providerRequest,
      providerResponse: { status: received?.status ?? null, requestId: received?.requestId ?? null, body },
    },
  };
}

/**
 * A failed SDK call as PROVIDER_ERROR, with what an operator needs to chase it (status and code in the
 * details; the request id, from the error or from `received` when the failure came after the headers, in the
 * trace with `providerRequest`). A lost continuation or an overflow of the context window is marked (reasonOf).
 */
export function providerError(
  error: unknown,
  received?: ReceivedAnswer,
  providerRequest: unknown = null,
): LlmCallFailure {
  const call = { providerRequest, received };
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return openAIFailure("OpenAI did not answer in time.", { reason: "timeout" }, call);
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return openAIFailure(`Could not reach OpenAI: ${error.message}`, { reason: "connection" }, call);
  }
  if (error instanceof OpenAI.APIError) {
    // An error object inside a 200 stream has no status of its own.
    const status = error.status ?? received?.status;
    const details: Record<string, unknown> = {
      status: status ?? null,
      code: error.code ?? null,
      type: error.type ?? null,
    };
    const reason = reasonOf(error.code);
    if (reason) details.reason = reason;
    return openAIFailure(`OpenAI answered ${status ?? "an error"}: ${error.message}`, details, {
      providerRequest,
      received: { status: status ?? null, requestId: error.requestID ?? received?.requestId ?? null },
      body: error.error,
    });
  }
  if (error instanceof StreamErrorEvent) {
    return openAIFailure(
      `OpenAI's stream reported an error: ${error.providerMessage}`,
      {
        reason: reasonOf(error.code) ?? "stream_error",
        code: error.code,
        message: error.providerMessage,
      },
      call,
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return openAIFailure(`OpenAI's answer could not be read: ${message}`, { reason: "malformed" }, call);
}
