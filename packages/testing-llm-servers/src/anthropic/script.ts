/** What a test scripts for the fake Anthropic Messages API: one step per `POST /v1/messages` that reaches the "model". */
import type { ContentBlock, RawMessageStreamEvent, StopReason } from "@anthropic-ai/sdk/resources/messages";
import type { ScriptedAnswer, ScriptedRequestRecord } from "../scripted/recorded-request.js";
import type { QueuedStep } from "../scripted/step-queue.js";
import {
  commonStepBuilders,
  type DropStep,
  type HttpErrorStep,
  type RawStep,
  type StepTiming,
} from "../scripted/steps.js";

/** A `tool_use` block the scripted model emits. */
export interface ToolUseSpec {
  name: string;
  /** The tool input object. Default `{}`. */
  input?: Record<string, unknown>;
  /** Default: a fresh `toolu_…` id. */
  id?: string;
}

/** A `thinking` block (or, with `redactedData`, a `redacted_thinking` block) the scripted model emits first. */
type ThinkingSpec =
  | {
      thinking: string;
      /** Default: a fresh opaque signature. */
      signature?: string;
    }
  | { redactedData: string };

/**
 * Usage to report. Without any input count, the input counts are the server's prompt-cache accounting of the
 * request; with one, the omitted ones are the request's context tokens (`input_tokens`) or 0. An omitted
 * `output_tokens` is the content's tokens.
 */
export interface AnthropicUsageSpec {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  output_tokens_details?: { thinking_tokens: number };
}

/** A successful (HTTP 200) answer: a Message, or a `text/event-stream` of its events for `stream: true`. */
export interface AnthropicReplyStep extends StepTiming {
  kind: "reply";
  /** Assistant text (one `text` block after any thinking). An array gives the stream's deltas; joined otherwise. */
  text?: string | string[];
  /** `tool_use` blocks, after the text. */
  toolUses?: ToolUseSpec[];
  /** Thinking blocks, before the text. */
  thinking?: ThinkingSpec[];
  /** Verbatim content blocks; replaces what `text`, `toolUses` and `thinking` would produce. */
  content?: ContentBlock[];
  usage?: AnthropicUsageSpec;
  /** Default `tool_use` when the content has `tool_use` blocks, else `end_turn`. */
  stopReason?: StopReason;
  /** For `stopReason: "stop_sequence"`: the sequence that matched. */
  stopSequence?: string;
  /** Message id. Default: a fresh `msg_…` id. */
  id?: string;
  /** Default: the request's `model`. */
  model?: string;
  /** Streaming only: wait this long before each delta event after the first. */
  chunkDelayMs?: number;
  /** Streaming only: destroy the connection after writing this many events (`ping` included). */
  dropAfterEvents?: number;
  /**
   * Streaming only: after this many events, send an `event: error` (as the real API does when it is overloaded
   * mid-answer) and end the stream. Default type `overloaded_error`.
   */
  streamError?: { afterEvents: number; type?: string; message?: string };
  /** Merged into the Message object last (top-level keys replace). */
  overrides?: Record<string, unknown>;
}

/** An HTTP error with Anthropic's body `{ type: "error", error: { type, message }, request_id }`. */
export interface AnthropicErrorStep extends HttpErrorStep {
  /** Default from the status: `invalid_request_error`, `rate_limit_error`, `api_error`, `overloaded_error`, … */
  type?: string;
  message?: string;
  /** Extra headers; a `request-id` here replaces the harness's. */
  headers?: Record<string, string>;
}

/** A verbatim body (e.g. invalid JSON, or JSON that is not a Message). */
type AnthropicRawStep = RawStep;

/** Destroy the connection without answering. */
type AnthropicDropStep = DropStep;

export type AnthropicStepObject =
  | AnthropicReplyStep
  | AnthropicErrorStep
  | AnthropicRawStep
  | AnthropicDropStep;

/** A step: an object, a string (shorthand for a text reply), or a function of the request that returns one. */
export type AnthropicScriptStep = QueuedStep<AnthropicStepObject, AnthropicRecordedRequest>;

/** A server-sent event as written: the Messages API's stream events, its `ping` and its `error`. */
export type AnthropicStreamEvent =
  | RawMessageStreamEvent
  | { type: "ping" }
  | { type: "error"; error: { type: string; message: string } };

/** How the harness answered a request (`kind` `harness`: validation, auth, routing). */
export interface AnthropicRecordedAnswer extends ScriptedAnswer {
  /** The id of the Message returned (replies only). */
  messageId?: string;
}

/** One HTTP request the server received. */
export interface AnthropicRecordedRequest
  extends ScriptedRequestRecord<AnthropicRecordedAnswer, AnthropicStreamEvent> {
  /** The 400 message of the first rule the body broke (`POST /v1/messages` only; also in `record` mode). */
  validationError?: string;
  /**
   * Where the body put prompt-cache breakpoints (`cache_control`), in the order the API caches them: `tools[1]`,
   * `system[0]`, `messages[3].content[1]`; `cache_control` for the request's own. Set on create requests that
   * passed the checks.
   */
  cacheBreakpoints?: string[];
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

const ERROR_MESSAGES: Record<string, string> = {
  rate_limit_error:
    "This request would exceed the rate limit for your organization. Please reduce the prompt length or the maximum tokens requested, or try again later.",
  api_error: "Internal server error",
  overloaded_error: "Overloaded",
  timeout_error: "Request timed out",
  authentication_error: "invalid x-api-key",
  not_found_error: "Not found",
};

function defaultErrorType(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

/** The body an error step is answered with (`requestId` goes into `request_id`, as the real API sends it). */
export function errorBody(stepObject: AnthropicErrorStep, requestId: string): unknown {
  if (stepObject.body !== undefined) return stepObject.body;
  const type = stepObject.type ?? defaultErrorType(stepObject.status);
  return {
    type: "error",
    error: {
      type,
      message: stepObject.message ?? ERROR_MESSAGES[type] ?? `Scripted error ${stepObject.status}.`,
    },
    request_id: requestId,
  };
}

type ReplyOptions = Omit<AnthropicReplyStep, "kind">;
type ErrorOptions = Omit<AnthropicErrorStep, "kind" | "status">;

/** Builders for script steps. */
export const anthropicStep = {
  ...commonStepBuilders<AnthropicReplyStep, AnthropicErrorStep>(
    '{"id": "msg_truncated", "type": "message", "role": "assis',
  ),
  /** One or more `tool_use` blocks, `stop_reason: "tool_use"` (add `text` in options for text before them). */
  toolUse(
    uses: ToolUseSpec | ToolUseSpec[],
    options: Omit<ReplyOptions, "toolUses"> = {},
  ): AnthropicReplyStep {
    return { kind: "reply", ...options, toolUses: Array.isArray(uses) ? uses : [uses] };
  },
  /** 429 `rate_limit_error` with `retry-after` (seconds). */
  rateLimited(retryAfterSeconds: number | string = 1, options: ErrorOptions = {}): AnthropicErrorStep {
    return {
      kind: "error",
      status: 429,
      type: "rate_limit_error",
      retryAfter: retryAfterSeconds,
      ...options,
    };
  },
  /** 529 `overloaded_error`. */
  overloaded(options: ErrorOptions = {}): AnthropicErrorStep {
    return { kind: "error", status: 529, type: "overloaded_error", ...options };
  },
};
