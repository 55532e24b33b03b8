import { fail, type InvokeFailure, type InvokeResult, ok } from "@aptix/contracts";
import type { Context } from "hono";
import type { AppEnv } from "./app-env.js";
import { countJsonSeparators } from "./json-separators.js";

/** Decodes UTF-8 as `Request.text()` does: a byte order mark dropped, a malformed sequence replaced. */
const utf8 = new TextDecoder();

/**
 * The most `,` and `:` a body may hold, about the number of its values. Parsing and judging a body costs about
 * a microsecond a value, more on a cold path, so a body of millions of tiny values (`{"k0":0,"k1":0,…}`) would
 * hold the event loop for seconds before any schema ran. A request to run a turn holds 2,000 at most, a push of
 * 1,000 documents about 6,000, and 1,000 to 2,000 more for each tag or metadata entry every document carries.
 */
export const MAX_JSON_SEPARATORS = 64 * 1024;

/**
 * The request's JSON body (as `requestBody` read it), before any schema judges it: UNSUPPORTED_MEDIA_TYPE when it
 * is not sent as `application/json`, VALIDATION_FAILED (naming the whole body) when it does not parse or holds
 * more than MAX_JSON_SEPARATORS values.
 */
export function readJsonBody(c: Context<AppEnv>): InvokeResult<unknown> {
  return notJson(c) ?? parseJson(c.get("body"));
}

/** UNSUPPORTED_MEDIA_TYPE when the body is not sent as `application/json`. */
export function notJson(c: Context<AppEnv>): InvokeFailure | undefined {
  if (/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "")) return undefined;
  return fail("UNSUPPORTED_MEDIA_TYPE", "Send the request body as application/json.");
}

/**
 * The value of a UTF-8 JSON body; VALIDATION_FAILED (naming the whole body) when it does not parse or holds more
 * than MAX_JSON_SEPARATORS values.
 */
function parseJson(body: Uint8Array): InvokeResult<unknown> {
  const text = utf8.decode(body);
  if (countJsonSeparators(text, MAX_JSON_SEPARATORS) > MAX_JSON_SEPARATORS) {
    const message = `holds more than ${MAX_JSON_SEPARATORS} JSON values (array items and object members); send fewer in one request`;
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

/** The body parsed as JSON and judged by `validate`. */
export function validatedJson<T>(
  body: Uint8Array,
  validate: (input: unknown) => InvokeResult<T>,
): InvokeResult<T> {
  const json = parseJson(body);
  return json.successful ? validate(json.result) : json;
}
