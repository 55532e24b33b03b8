import { z } from "zod";
import { ToolCallIdSchema } from "../text/identifier.js";
import { isJsonText } from "../text/json-text.js";
import { freeText } from "../text/storable-text.js";

/**
 * The outcome fields shared by a client's tool result and a server-executed one: exactly one of
 * `resultJson` (JSON text) or `errorMessage` (AGN-033 §5.2). `maxChars` caps either.
 */
export function toolOutcomeShape(maxChars?: number) {
  return {
    toolCallId: ToolCallIdSchema,
    executionMs: z.number().min(0, "must be 0 or more"),
    // JSON text: its escapes (`\u0000`, `\ud83d`) are text as written, but its own characters must be storable.
    resultJson: freeText({ maxChars, empty: true }).optional(),
    errorMessage: freeText({ maxChars }).optional(),
  };
}

/** The `superRefine` and JSON Schema halves of the exactly-one-outcome rule, applied to an outcome object. */
export function withExactlyOneOutcome<T extends z.ZodType<{ resultJson?: string; errorMessage?: string }>>(
  schema: T,
) {
  return schema
    .superRefine((result, ctx) => {
      const hasResult = result.resultJson !== undefined;
      const hasError = result.errorMessage !== undefined;
      if (hasResult === hasError) {
        ctx.addIssue({
          code: "custom",
          path: [],
          message: hasResult
            ? "must carry either resultJson or errorMessage, not both"
            : "must carry exactly one of resultJson or errorMessage",
        });
      } else if (result.resultJson !== undefined && !isJsonText(result.resultJson)) {
        ctx.addIssue({ code: "custom", path: ["resultJson"], message: "must be valid JSON text" });
      }
    })
    .meta({ oneOf: [{ required: ["resultJson"] }, { required: ["errorMessage"] }] });
}

/** A client's result for one tool call it was asked to run (AGN-034 §5). */
export function toolResultSchema(maxChars?: number) {
  return withExactlyOneOutcome(z.strictObject(toolOutcomeShape(maxChars)));
}

export type ToolResult = z.infer<ReturnType<typeof toolResultSchema>>;
