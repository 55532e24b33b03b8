import { z } from "zod";
import { ERROR_CODES } from "./error-code.js";

export const InvokeErrorSchema = z.strictObject({
  code: z.enum(ERROR_CODES),
  message: z.string().min(1),
  /** Machine-readable context: `fields` for VALIDATION_FAILED, provider, status and code for PROVIDER_ERROR. */
  details: z.record(z.string(), z.unknown()).optional(),
});

export type InvokeError = z.infer<typeof InvokeErrorSchema>;
