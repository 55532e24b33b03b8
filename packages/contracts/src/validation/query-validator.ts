import type { z } from "zod";
import { fail, type InvokeResult, ok } from "../result/invoke-result.js";
import { contractErrorMessages } from "./error-messages.js";
import { reportFieldErrors } from "./to-field-errors.js";

/** A validator of a route's query (strings from a URL): VALIDATION_FAILED naming each failing parameter. */
export function queryValidator<S extends z.ZodType>(schema: S) {
  return (query: Record<string, string>): InvokeResult<z.output<S>> => {
    const parsed = schema.safeParse(query, { error: contractErrorMessages });
    if (parsed.success) return ok(parsed.data);
    const { fields, summary } = reportFieldErrors(
      "query",
      parsed.error.issues,
      () => "is not a query parameter here",
    );
    return fail("VALIDATION_FAILED", `Invalid query: ${summary}.`, { fields });
  };
}
