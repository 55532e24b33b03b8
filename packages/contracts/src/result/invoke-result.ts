import { z } from "zod";
import type { ErrorCode } from "./error-code.js";
import { type InvokeError, InvokeErrorSchema } from "./invoke-error.js";
import { type InvokeWarning, InvokeWarningSchema } from "./invoke-warning.js";

/**
 * The envelope of every answer (AGN-033 §2.1, AGN-027 §5): a success carries `result` and no errors;
 * a failure carries at least one error and no `result` key at all.
 */
export type InvokeResult<T> = InvokeSuccess<T> | InvokeFailure;

export interface InvokeSuccess<T> {
  successful: true;
  result: T;
  errors: [];
  warnings: InvokeWarning[];
}

export interface InvokeFailure {
  successful: false;
  errors: [InvokeError, ...InvokeError[]];
  warnings: InvokeWarning[];
}

export function invokeResultSchema<T extends z.ZodType>(result: T) {
  return z.discriminatedUnion("successful", [
    z.strictObject({
      successful: z.literal(true),
      result,
      errors: z.array(InvokeErrorSchema).max(0, "must be empty when successful is true"),
      warnings: z.array(InvokeWarningSchema),
    }),
    z.strictObject({
      successful: z.literal(false),
      errors: z.array(InvokeErrorSchema).min(1, "must hold at least one error when successful is false"),
      warnings: z.array(InvokeWarningSchema),
    }),
  ]);
}

export function ok<T>(result: T, warnings: InvokeWarning[] = []): InvokeSuccess<T> {
  return { successful: true, result, errors: [], warnings };
}

export function fail(
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
  warnings: InvokeWarning[] = [],
): InvokeFailure {
  const error: InvokeError = details === undefined ? { code, message } : { code, message, details };
  return { successful: false, errors: [error], warnings };
}
