import { z } from "zod";
import type { RequestLimits } from "../limits.js";
import { IdentifierSchema } from "../text/identifier.js";
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
      .max(limits.maxToolResults, `must hold at most ${limits.maxToolResults} tool results`),
  });
}

export type ToolContinuationRequest = z.infer<ReturnType<typeof toolContinuationRequestSchema>>;
