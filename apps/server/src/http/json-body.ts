import { fail, type InvokeResult, ok } from "@aptix/contracts";
import type { Context } from "hono";
import type { AppEnv } from "./app-env.js";

/**
 * The request's JSON body, before any schema judges it: UNSUPPORTED_MEDIA_TYPE when it is not sent as
 * `application/json`, VALIDATION_FAILED (naming the whole body) when it does not parse.
 */
export async function readJsonBody(c: Context<AppEnv>): Promise<InvokeResult<unknown>> {
  if (!/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
    return fail("UNSUPPORTED_MEDIA_TYPE", "Send the request body as application/json.");
  }
  try {
    return ok(await c.req.json());
  } catch {
    return fail("VALIDATION_FAILED", "The request body is not valid JSON.", {
      fields: [{ path: "", message: "is not valid JSON" }],
    });
  }
}
