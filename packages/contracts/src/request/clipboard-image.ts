import { z } from "zod";
import type { RequestLimits } from "../limits.js";
import { BASE64_MESSAGE, BASE64_PATTERN, base64LengthFor } from "../text/base64.js";
import { IdentifierSchema } from "../text/identifier.js";

/** Image types every supported provider accepts as input. */
export const CLIPBOARD_IMAGE_MIME_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;

/** An image pasted from the clipboard (AGN-034 §4.3). */
export function clipboardImageSchema(limits: RequestLimits) {
  return z.strictObject({
    id: IdentifierSchema,
    mimeType: z.enum(CLIPBOARD_IMAGE_MIME_TYPES),
    dataBase64: z
      .string()
      .min(1, "must not be empty")
      .max(base64LengthFor(limits.maxImageBytes), `must decode to at most ${limits.maxImageBytes} bytes`)
      .regex(BASE64_PATTERN, BASE64_MESSAGE),
  });
}

export type ClipboardImage = z.infer<ReturnType<typeof clipboardImageSchema>>;
