import { httpStatusOf, type InvokeResult } from "@aptix/contracts";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "./app-env.js";

/**
 * Every body is an InvokeResult; the HTTP status mirrors its first error (docs/http-api.md). A failure's errors
 * are kept for the access log.
 */
export function sendResult<T>(c: Context<AppEnv>, result: InvokeResult<T>): Response {
  if (!result.successful) c.set("resultErrors", result.errors);
  const status = (result.successful ? 200 : httpStatusOf(result.errors[0].code)) as ContentfulStatusCode;
  return c.json(result, status);
}
