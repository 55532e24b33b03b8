import { fail, type InvokeResult, ok } from "@aptix/contracts";
import type { Context } from "hono";
import type { AppEnv } from "./app-env.js";
import { countJsonSeparators } from "./json-separators.js";

/** Decodes UTF-8 as `Request.text()` does: a byte order mark dropped, a malformed sequence replaced. */
const utf8 = new TextDecoder();

/**
 * The most `,` and `:` a body may hold. Parsing and judging a body costs about a microsecond a value, so a body
 * of millions of tiny values (`{"k0":0,"k1":0,…}`) would hold the event loop for seconds; the largest request
 * the contracts accept, a push of 1,000 documents with every tag and metadata entry, holds about 203,000.
 */
export const MAX_JSON_SEPARATORS = 256 * 1024;

/**
 * The request's JSON body (as `requestBody` read it), before any schema judges it: UNSUPPORTED_MEDIA_TYPE when it
 * is not sent as `application/json`, VALIDATION_FAILED (naming the whole body) when it does not parse or holds
 * more values than any request the service accepts.
 */
export function readJsonBody(c: Context<AppEnv>): InvokeResult<unknown> {
  if (!/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
    return fail("UNSUPPORTED_MEDIA_TYPE", "Send the request body as application/json.");
  }
  const text = utf8.decode(c.get("body"));
  if (countJsonSeparators(text, MAX_JSON_SEPARATORS) > MAX_JSON_SEPARATORS) {
    const message = `holds more than ${MAX_JSON_SEPARATORS} JSON values, more than any request the service accepts`;
    return fail("VALIDATION_FAILED", `The request body ${message}.`, { fields: [{ path: "", message }] });
  }
  try {
    return ok(JSON.parse(text));
  } catch {
    return fail("VALIDATION_FAILED", "The request body is not valid JSON.", {
      fields: [{ path: "", message: "is not valid JSON" }],
    });
  }
}
