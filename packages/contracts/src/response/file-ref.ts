import { z } from "zod";

/** A file the agent produced, served by reference, never inline (AGN-033 §6.3). */
export const FileRefSchema = z.strictObject({
  name: z.string().min(1, "must not be empty"),
  mimeType: z.string().min(1, "must not be empty"),
  /** Where the owner fetches the content, e.g. `/v1/files/{fileId}`. */
  url: z.string().min(1, "must not be empty"),
  sizeBytes: z.int().min(0),
  /** `sha256:` and the hex digest of the content. */
  contentHash: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/, "must be 'sha256:' followed by 64 lowercase hex digits"),
  description: z.string().optional(),
  /** ISO-8601; absent means the content does not expire. */
  contentExpires: z.iso.datetime({ offset: true, message: "must be an ISO-8601 date-time" }).optional(),
});

export type FileRef = z.infer<typeof FileRefSchema>;
