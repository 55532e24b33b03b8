import { type ErrorCode, httpStatusOf, type InvokeResult, type InvokeWarning } from "@aptix/contracts";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "./app-env.js";
import { withRequestId } from "./with-request-id.js";

/**
 * The `Retry-After` (seconds) of the failures a client should simply send again: a session busy with another
 * round is free again soon, a server without its database takes longer (docs/http-api.md, Retrying). A
 * refusal's own `details.retryAfterSeconds` comes first (a limit knows when it frees up).
 */
export const RETRY_AFTER_SECONDS: Readonly<Partial<Record<ErrorCode, number>>> = {
  SESSION_BUSY: 1,
  RATE_LIMITED: 1,
  NOT_READY: 5,
};

/**
 * Every body is an InvokeResult; the HTTP status mirrors its first error (docs/http-api.md), and so does
 * `Retry-After`: the error's own `details.retryAfterSeconds` (RATE_LIMITED), else its code's. An INTERNAL
 * error carries the request id (`withRequestId`). A failure's errors are kept for the access log.
 */
export function sendResult<T>(c: Context<AppEnv>, answered: InvokeResult<T>): Response {
  const result = noted(c, withRequestId(answered, c.get("requestId")));
  if (!result.successful) {
    c.set("resultErrors", result.errors);
    const [first] = result.errors;
    const own = first.details?.retryAfterSeconds;
    const retryAfter = typeof own === "number" ? own : RETRY_AFTER_SECONDS[first.code];
    if (retryAfter !== undefined) c.header("Retry-After", String(retryAfter));
  }
  const status = (result.successful ? 200 : httpStatusOf(result.errors[0].code)) as ContentfulStatusCode;
  return c.json(result, status);
}

/** `result` with the warnings every answer of the app carries (`AppOptions.notices`) after its own. */
export function noted<R extends { warnings: InvokeWarning[] }>(c: Context<AppEnv>, result: R): R {
  const notices = c.get("notices");
  return notices === undefined ? result : { ...result, warnings: [...result.warnings, ...notices] };
}
