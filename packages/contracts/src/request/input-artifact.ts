import { z } from "zod";
import { FIELD_LENGTH_LIMITS, type RequestLimits } from "../limits.js";
import { BASE64_MESSAGE, BASE64_PATTERN, base64LengthFor } from "../text/base64.js";
import { RelativePathSchema } from "../text/relative-path.js";
import { freeText, STORABLE_TEXT_PATTERN, unstorableTextMessage } from "../text/storable-text.js";
import { utf8ByteLength } from "../text/utf8-byte-length.js";

/** A file the client hands to the agent as advisory input (AGN-034 §4.2). */
export function inputArtifactSchema(limits: RequestLimits) {
  const { maxFileNameChars, maxMimeTypeChars, maxLanguageChars } = FIELD_LENGTH_LIMITS;
  const maxBase64Length = base64LengthFor(limits.maxArtifactBytes);
  return z
    .strictObject({
      relativePath: RelativePathSchema,
      fileName: freeText({ maxChars: maxFileNameChars }).regex(
        /^[^/\\]*$/,
        "must be a bare file name, without '/' or '\\'",
      ),
      contents: z.string(),
      origin: z.enum(["ide", "user"]),
      mimeType: z
        .string()
        .max(maxMimeTypeChars, `must be at most ${maxMimeTypeChars} characters`)
        .regex(
          // Explicit ranges, not the `i` flag: JSON Schema patterns have no flags, so `i` would be lost there.
          /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$/,
          "must be a MIME type such as text/plain",
        )
        .optional(),
      language: freeText({ maxChars: maxLanguageChars }).optional(),
      /** `utf8` when absent. */
      encoding: z.enum(["utf8", "base64"]).optional(),
    })
    .superRefine((artifact, ctx) => {
      if (artifact.encoding === "base64") {
        if (!BASE64_PATTERN.test(artifact.contents)) {
          ctx.addIssue({ code: "custom", path: ["contents"], message: BASE64_MESSAGE });
        } else if (artifact.contents.length > maxBase64Length) {
          ctx.addIssue({
            code: "custom",
            path: ["contents"],
            message: `must decode to at most ${limits.maxArtifactBytes} bytes`,
          });
        }
      } else if (!STORABLE_TEXT_PATTERN.test(artifact.contents)) {
        ctx.addIssue({
          code: "custom",
          path: ["contents"],
          message: unstorableTextMessage(artifact.contents),
        });
      } else if (utf8ByteLength(artifact.contents) > limits.maxArtifactBytes) {
        ctx.addIssue({
          code: "custom",
          path: ["contents"],
          message: `must be at most ${limits.maxArtifactBytes} bytes of UTF-8`,
        });
      }
    })
    .meta({
      // JSON Schema form of the refinement above (it counts characters where zod counts UTF-8 bytes).
      if: { properties: { encoding: { const: "base64" } }, required: ["encoding"] },
      // biome-ignore lint/suspicious/noThenProperty: a JSON Schema keyword, not a thenable.
      then: { properties: { contents: { pattern: BASE64_PATTERN.source, maxLength: maxBase64Length } } },
      else: {
        properties: {
          contents: { maxLength: limits.maxArtifactBytes, pattern: STORABLE_TEXT_PATTERN.source },
        },
      },
    });
}

export type InputArtifact = z.infer<ReturnType<typeof inputArtifactSchema>>;
