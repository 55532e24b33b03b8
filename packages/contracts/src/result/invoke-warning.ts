import { z } from "zod";

/** A system-level, non-fatal note about the invocation (AGN-033 §2.1). User-facing notes go in `userWarnings`. */
export const InvokeWarningSchema = z.strictObject({
  code: z.string().regex(/^[A-Z][A-Z0-9_]*$/, "must be an UPPER_SNAKE_CASE code"),
  message: z.string().min(1),
});

export type InvokeWarning = z.infer<typeof InvokeWarningSchema>;
