import { httpStatusOf, type InvokeResult } from "@aptix/contracts";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Every body is an InvokeResult; the HTTP status mirrors its first error (DESIGN.md §3). */
export function sendResult<T>(c: Context, result: InvokeResult<T>): Response {
  const status = (result.successful ? 200 : httpStatusOf(result.errors[0].code)) as ContentfulStatusCode;
  return c.json(result, status);
}
