import { z } from "zod";
import { ToolCallIdSchema } from "../text/identifier.js";
import { isJsonObjectText } from "../text/json-text.js";

/** A tool call the client must execute (AGN-033 §5.1). */
export const ToolCallSchema = z.strictObject({
  toolCallId: ToolCallIdSchema,
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1–64 characters of letters, digits, '_' or '-'"),
  argumentsJson: z.string().refine(isJsonObjectText, "must be JSON text of an object"),
});

export type ToolCall = z.infer<typeof ToolCallSchema>;
