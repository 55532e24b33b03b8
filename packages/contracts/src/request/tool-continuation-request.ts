import { z } from "zod";
import type { RequestLimits } from "../limits.js";
import { IdentifierSchema } from "../text/identifier.js";
import { uniqueIds } from "../validation/unique-ids.js";
import { toolResultSchema } from "./tool-result.js";

/**
 * Results for the tool calls a turn handed to the client (AGN-034 §2.2). Mechanical only: nothing but the
 * ids and the results, which must match the turn's calls exactly in count, ids and order (AGN-033 §3.3).
 */
export function toolContinuationRequestSchema(limits: RequestLimits) {
  return z.strictObject({
    sessionId: IdentifierSchema,
    turnId: IdentifierSchema,
    toolResults: z
      .array(toolResultSchema(limits.maxToolResultChars))
      .min(1, "must hold at least one tool result")
      .max(limits.maxToolResults, `must hold at most ${limits.maxToolResults} tool results`)
      // A repeated id can never match the turn's calls; saying so here names the entry (AGN-033 §3.3).
      .superRefine(uniqueIds("toolResults", "toolCallId")),
  });
}

export type ToolContinuationRequest = z.infer<ReturnType<typeof toolContinuationRequestSchema>>;
