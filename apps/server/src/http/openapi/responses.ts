import { ERROR_CODES, ERROR_HTTP_STATUS, type ErrorCode } from "@aptix/contracts";
import type { RouteConfig } from "@hono/zod-openapi";
import { RETRY_AFTER_SECONDS } from "../send-result.js";
import type { AnswerName } from "./component-schemas.js";

type Responses = RouteConfig["responses"];
type Response = Responses[string];

/** A component schema of the document (`componentSchemas`). */
export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The operations that need an API key (none in local mode), and those anyone may call. */
/**
 * A JSON body described by its component: the route reads and validates it itself, so a bad one is refused
 * with VALIDATION_FAILED naming the field (the library would answer its own error).
 */
export const jsonBody = (component: string, example: unknown) => ({
  required: true,
  content: { "application/json": { schema: schemaRef(component), example } },
});

export const OWNER_ONLY = [{ apiKey: [] }];
export const PUBLIC: [] = [];

/** The JSON of a 200: the InvokeResult that carries `answer`, with an example of that answer. */
export function jsonAnswer(answer: AnswerName, example: unknown) {
  return {
    schema: schemaRef(`${answer}Success`),
    example: { successful: true, result: example, errors: [], warnings: [] },
  };
}

/** A 200 answering the InvokeResult that carries `answer`. */
export function success(answer: AnswerName, description: string, example: unknown): Response {
  return { description, content: { "application/json": jsonAnswer(answer, example) } };
}

/** An example message of the first code answered with each status, for the failures' examples. */
const EXAMPLE_MESSAGES: Partial<Record<ErrorCode, [string, Record<string, unknown>?]>> = {
  VALIDATION_FAILED: [
    "Invalid request: sessionId is required.",
    { fields: [{ path: "sessionId", message: "is required" }] },
  ],
  UNAUTHORIZED: ["Send a valid API key as 'Authorization: Bearer <key>'."],
  FORBIDDEN: [
    "This service runs in local mode and answers callers on this machine only: the request came through a proxy (its X-Forwarded-For header), which forwards someone else.",
  ],
  SESSION_NOT_FOUND: ["No session s-42."],
  FILE_EXPIRED: ["The file's content has expired."],
  METHOD_NOT_ALLOWED: [
    "/v1/sessions does not answer POST; it answers GET, HEAD.",
    { method: "POST", allow: ["GET", "HEAD"] },
  ],
  SESSION_BUSY: ["Another turn of session s-42 is running."],
  PAYLOAD_TOO_LARGE: ["The body is larger than 10485760 bytes.", { maxBytes: 10_485_760 }],
  UNSUPPORTED_MEDIA_TYPE: ["Send the request body as application/json."],
  RATE_LIMITED: ["Too many requests.", { retryAfterSeconds: 2 }],
  INTERNAL: [
    "The service failed unexpectedly; the request id identifies it in the logs.",
    { requestId: "3f0c1a9e-5b7d-4c1e-9a55-2d6f0e8b7c41" },
  ],
  PROVIDER_ERROR: ["The LLM provider failed.", { provider: "openai", status: 500 }],
  NOT_READY: ["The service cannot reach its database; send the request again later.", { retryable: true }],
};

/**
 * The `Retry-After` header of a status whose codes carry one (RETRY_AFTER_SECONDS), in seconds; a limit's 429
 * says its own wait.
 */
function retryAfter(status: number): Pick<Exclude<Response, { $ref: string }>, "headers"> {
  const codes = Object.entries(RETRY_AFTER_SECONDS).filter(
    ([code]) => ERROR_HTTP_STATUS[code as ErrorCode] === status,
  );
  const told =
    status === ERROR_HTTP_STATUS.RATE_LIMITED ? ["`details.retryAfterSeconds` with RATE_LIMITED"] : [];
  if (codes.length + told.length === 0) return {};
  const waits = [...codes.map(([code, seconds]) => `${seconds} s with ${code}`), ...told].join(", ");
  return {
    headers: {
      "Retry-After": {
        description: `Seconds to wait before sending the same request again: ${waits}.`,
        schema: { type: "integer", minimum: 0 },
      },
    },
  };
}

/** A failed InvokeResult with `status`: the codes it carries, and an example of the first. */
function failure(status: number): Response {
  const codes = ERROR_CODES.filter((code) => ERROR_HTTP_STATUS[code] === status);
  const [code = "INTERNAL"] = codes;
  const [message = `A ${code} failure.`, details] = EXAMPLE_MESSAGES[code] ?? [];
  return {
    description: `A failed InvokeResult whose first error is ${codes.join(", ")}.`,
    ...retryAfter(status),
    content: {
      "application/json": {
        schema: schemaRef("InvokeFailure"),
        example: {
          successful: false,
          errors: [{ code, message, ...(details ? { details } : {}) }],
          warnings: [],
        },
      },
    },
  };
}

const ERROR_STATUSES = [...new Set(Object.values(ERROR_HTTP_STATUS))].sort();

/** Every failure a route may answer, by status: the status mirrors the first error. */
export const FAILURES: Responses = Object.fromEntries(
  ERROR_STATUSES.map((status) => [String(status), failure(status)]),
);

/** The failures of a route that answers only some statuses. */
export const failuresOf = (...statuses: number[]): Responses =>
  Object.fromEntries(statuses.map((status) => [String(status), failure(status)]));

/**
 * A streamed turn as `text/event-stream`. OpenAPI 3.1 has no schema for the events of a stream: the stream is
 * text, its events described here and shown by the example.
 */
export const EVENT_STREAM = {
  schema: {
    type: "string" as const,
    description:
      'Server-sent events, each with an `id:`: `event: output_text.delta` with `{"delta":"…"}` as text arrives, ' +
      "`event: output_text.reset` with `{}` when the text shown so far is dropped (an intermediate LLM call's, " +
      "or an interrupted attempt's), then exactly one `event: result` whose data is an AgentExecuteResult. " +
      "The deltas since the last reset add up to the result's `primaryOutputText` (or `toolContinuationMessage`); " +
      "a mode change's welcome is streamed as a delta. Lines starting with `:` keep an idle stream open.",
  },
  example: [
    "id: 0-0",
    "event: output_text.delta",
    'data: {"delta":"The build "}',
    "",
    "id: 0-1",
    "event: output_text.delta",
    'data: {"delta":"passes."}',
    "",
    "id: 0-result",
    "event: result",
    'data: {"successful":true,"result":{"kind":"final","sessionId":"s-42","turnId":"t-1","modeDisplayName":"General","primaryOutputText":"The build passes."},"errors":[],"warnings":[]}',
    "",
    "",
  ].join("\n"),
};
