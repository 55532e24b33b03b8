import { z } from "zod";
import { FIELD_LENGTH_LIMITS, type RequestLimits } from "../limits.js";
import { freeText } from "../text/storable-text.js";

export const RAG_SCOPE_OPERATORS = ["==", "!=", "contains", "does_not_contain"] as const;

/** One retrieval hint (AGN-034 §4.4); all conditions of a request are ANDed and advisory. */
export function ragScopeConditionSchema(limits: RequestLimits) {
  return z.strictObject({
    key: freeText({ maxChars: FIELD_LENGTH_LIMITS.maxRagScopeKeyChars }),
    operator: z.enum(RAG_SCOPE_OPERATORS),
    values: z
      .array(freeText({ maxChars: FIELD_LENGTH_LIMITS.maxRagScopeValueChars, empty: true }))
      .min(1, "must hold at least one value")
      .max(limits.maxRagScopeValues, `must hold at most ${limits.maxRagScopeValues} values`),
  });
}

export type RagScopeCondition = z.infer<ReturnType<typeof ragScopeConditionSchema>>;
