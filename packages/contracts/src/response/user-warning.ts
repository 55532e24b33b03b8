import { z } from "zod";

/** A non-fatal, user-relevant note on a final response (AGN-033 §4.3). */
export const UserWarningSchema = z.strictObject({
  code: z.string().regex(/^[A-Z][A-Z0-9_]*$/, "must be an UPPER_SNAKE_CASE code"),
  message: z.string().min(1, "must not be empty"),
});

export type UserWarning = z.infer<typeof UserWarningSchema>;
