import { z } from "zod";

/**
 * A path relative to the workspace root opened in the IDE (AGN-034 §4.2). Separators are `/`; anything that
 * could climb out of the workspace or name another root is refused, each rule with its own message.
 */
export const RelativePathSchema = z
  .string()
  .min(1, "must not be empty")
  .max(1024, "must be at most 1024 characters")
  .regex(/^[^\\]*$/, "must use '/' as its separator, never '\\'")
  .regex(/^(?!\/)/, "must be relative to the workspace root, not start with '/'")
  .regex(/^(?![A-Za-z]:)/, "must not start with a drive letter")
  .regex(/^(?!(?:.*\/)?\.\.(?:\/|$))/, "must not contain a '..' segment")
  .regex(/^(?!.*\/\/)(?!.*\/$)/, "must not contain an empty segment ('//') or end with '/'")
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
  .regex(/^[^\u0000-\u001f\u007f]*$/, "must not contain control characters");
