import { z } from "zod";
import type { RequestLimits } from "../limits.js";
import { NO_NUL_MESSAGE, NO_NUL_PATTERN } from "../text/no-nul.js";

export const RAG_SCOPE_OPERATORS = ["==", "!=", "contains", "does_not_contain"] as const;

/** One retrieval hint (AGN-034 §4.4); all conditions of a request are ANDed and advisory. */
export function ragScopeConditionSchema(limits: RequestLimits) {
  return z.strictObject({
    key: z
      .string()
      .min(1, "must not be empty")
      .max(128, "must be at most 128 characters")
      .regex(NO_NUL_PATTERN, NO_NUL_MESSAGE),
    operator: z.enum(RAG_SCOPE_OPERATORS),
    values: z
      .array(z.string().max(1024, "must be at most 1024 characters").regex(NO_NUL_PATTERN, NO_NUL_MESSAGE))
      .min(1, "must hold at least one value")
      .max(limits.maxRagScopeValues, `must hold at most ${limits.maxRagScopeValues} values`),
  });
}

export type RagScopeCondition = z.infer<ReturnType<typeof ragScopeConditionSchema>>;
