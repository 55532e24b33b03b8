import { fail, type InvokeResult, ok } from "@aptix/contracts";
import type { Context } from "hono";
import type { AppEnv } from "./app-env.js";

/** Decodes UTF-8 as `Request.text()` does: a byte order mark dropped, a malformed sequence replaced. */
const utf8 = new TextDecoder();

/**
 * The request's JSON body (as `requestBody` read it), before any schema judges it: UNSUPPORTED_MEDIA_TYPE when it
 * is not sent as `application/json`, VALIDATION_FAILED (naming the whole body) when it does not parse.
 */
export function readJsonBody(c: Context<AppEnv>): InvokeResult<unknown> {
  if (!/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
    return fail("UNSUPPORTED_MEDIA_TYPE", "Send the request body as application/json.");
  }
  try {
    return ok(JSON.parse(utf8.decode(c.get("body"))));
  } catch {
    return fail("VALIDATION_FAILED", "The request body is not valid JSON.", {
      fields: [{ path: "", message: "is not valid JSON" }],
    });
  }
}
