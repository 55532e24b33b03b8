/** What a test scripts for the fake OpenAI Responses API: one step per `POST /v1/responses` that reaches the "model". */
import type { ResponseOutputItem, ResponseStreamEvent } from "openai/resources/responses/responses";
import type { ScriptedAnswer, ScriptedRequestRecord } from "../scripted/recorded-request.js";
import type { QueuedStep } from "../scripted/step-queue.js";
import {
  commonStepBuilders,
  type DropStep,
  type HttpErrorStep,
  type RawStep,
  type StepTiming,
} from "../scripted/steps.js";
import type { SchemaViolation } from "./openapi.js";
import type { WireResponse } from "./wire.js";

/** A function call the scripted model makes. */
export interface FunctionCallSpec {
  name: string;
  /** The arguments as JSON text, or a value that is `JSON.stringify`-ed. Default `{}`. */
  arguments?: string | Record<string, unknown> | unknown[];
  /** Default: a fresh `call_…` id. */
  callId?: string;
  /** Item id. Default: a fresh `fc_…` id. */
  id?: string;
  /** Default `completed`. */
  status?: "in_progress" | "completed" | "incomplete";
}

/** A reasoning item the scripted model emits (before its message and calls). */
interface ReasoningSpec {
  /** Default: a fresh `rs_…` id. */
  id?: string;
  /** Summary texts (`summary_text` parts). Default none. */
  summary?: string[];
  encryptedContent?: string | null;
}

/** Usage to report; omitted fields are the request's context tokens (`input_tokens`), the output's tokens (`output_tokens`), their sum or 0. */
export interface UsageSpec {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  input_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
  output_tokens_details?: { reasoning_tokens?: number };
}

/** A successful (HTTP 200) answer: a Response object, or a `text/event-stream` of events for `stream: true`. */
export interface ReplyStep extends StepTiming {
  kind: "reply";
  /** Assistant text (one `message` item with one `output_text` part). An array gives the stream's deltas; joined otherwise. */
  text?: string | string[];
  functionCalls?: FunctionCallSpec[];
  reasoning?: ReasoningSpec[];
  /** Verbatim output items; replaces what `text`, `functionCalls` and `reasoning` would produce. */
  output?: ResponseOutputItem[];
  usage?: UsageSpec;
  /** Default `completed`. `incomplete` sets `incomplete_details` (default reason `max_output_tokens`). */
  status?: "completed" | "incomplete" | "failed";
  incompleteDetails?: { reason: "max_output_tokens" | "content_filter" };
  /** For `status: "failed"`. Default `{ code: "server_error", message: "The model failed to generate a response." }`. */
  error?: { code: string; message: string };
  /** Response id. Default: a fresh `resp_…` id. */
  id?: string;
  /** Default: the request's `model`. */
  model?: string;
  /** Streaming only: wait this long before each delta event after the first. */
  chunkDelayMs?: number;
  /** Streaming only: destroy the connection after writing this many events. */
  dropAfterEvents?: number;
  /** Merged into the Response object last (top-level keys replace). */
  overrides?: Partial<WireResponse> & Record<string, unknown>;
}

/** An HTTP error with an OpenAI-style body `{ error: { message, type, param, code } }`. */
export interface ErrorStep extends HttpErrorStep {
  message?: string;
  type?: string;
  param?: string | null;
  code?: string | null;
}

export type StepObject = ReplyStep | ErrorStep | RawStep | DropStep;

/** A step: an object, a string (shorthand for a text reply), or a function of the request that returns one. */
export type ScriptStep = QueuedStep<StepObject, RecordedRequest>;

/** How the harness answered a request (`kind` `harness`: validation, store, routing). */
export interface RecordedAnswer extends ScriptedAnswer {
  /** The id of the Response returned (replies only). */
  responseId?: string;
}

/** One HTTP request the server received. */
export interface RecordedRequest extends ScriptedRequestRecord<RecordedAnswer, ResponseStreamEvent> {
  /** Present when the body failed `CreateResponse` validation (`POST /v1/responses` only). */
  schemaErrors?: SchemaViolation[];
}

function defaultErrorType(status: number): string {
  if (status === 401) return "invalid_request_error";
  if (status === 429) return "requests";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

function defaultErrorMessage(status: number): string {
  if (status === 429) return "Rate limit reached for requests. Please try again later.";
  if (status >= 500) return "The server had an error while processing your request. Sorry about that!";
  return `Scripted error ${status}.`;
}

/** The body an ErrorStep is answered with. */
export function errorBody(step: ErrorStep): unknown {
  if (step.body !== undefined) return step.body;
  return {
    error: {
      message: step.message ?? defaultErrorMessage(step.status),
      type: step.type ?? defaultErrorType(step.status),
      param: step.param ?? null,
      code: step.code ?? null,
    },
  };
}

type ReplyOptions = Omit<ReplyStep, "kind">;

/** Builders for script steps. */
export const step = {
  ...commonStepBuilders<ReplyStep, ErrorStep>('{"id": "resp_truncated", "object": "resp'),
  /** One or more function calls (add `text` in options for text plus calls). */
  functionCalls(
    calls: FunctionCallSpec | FunctionCallSpec[],
    options: Omit<ReplyOptions, "functionCalls"> = {},
  ) {
    return { kind: "reply", ...options, functionCalls: Array.isArray(calls) ? calls : [calls] } as ReplyStep;
  },
  /** 429 with `retry-after` (seconds). */
  rateLimited(
    retryAfterSeconds: number | string = 1,
    options: Omit<ErrorStep, "kind" | "status"> = {},
  ): ErrorStep {
    return {
      kind: "error",
      status: 429,
      type: "requests",
      code: "rate_limit_exceeded",
      retryAfter: retryAfterSeconds,
      ...options,
    };
  },
};
