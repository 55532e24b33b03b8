import { z } from "zod";
import { FIELD_LENGTH_LIMITS } from "../limits.js";
import { STORABLE_TEXT_ERROR, STORABLE_TEXT_PATTERN } from "./storable-text.js";

const { maxRelativePathChars } = FIELD_LENGTH_LIMITS;

/**
 * A path relative to the workspace root opened in the IDE (AGN-034 §4.2), in canonical form: segments joined
 * by `/`, none of them empty, `.` or `..`. Anything that could climb out of the workspace or name another root
 * is refused, each rule with its own message. The rules are written so that a path usually breaks only one.
 *
 * Windows drops the dots and spaces that end a path segment, so a segment like `.. ` or `...` can act as `..`
 * there, and `notes.` names `notes`: a segment must not end with a dot or a space. Dots elsewhere stay
 * ordinary (`.github`, `.env`, `a..b`, `notes...md`).
 */
export const RelativePathSchema = z
  .string()
  .min(1, "must not be empty")
  .max(maxRelativePathChars, `must be at most ${maxRelativePathChars} characters`)
  .regex(/^[^\\]*$/, "must use '/' as its separator, never '\\'")
  .regex(/^(?!\/)/, "must be relative to the workspace root, not start with '/'")
  .regex(/^(?![A-Za-z]:)/, "must not start with a drive letter")
  .regex(/^(?!(?:.*\/)?\.\.(?:\/|$))/, "must not contain a '..' segment")
  .regex(/^(?!(?:.*\/)?\.(?:\/|$))/, "must not contain a '.' segment; write 'a/b', not './a/b' or 'a/./b'")
  .regex(/^(?!.*\/\/)(?!.*\/$)/, "must not contain an empty segment ('//') or end with '/'")
  .regex(
    // Segments of dots and spaces other than `.` and `..` themselves, which have their own messages.
    /^(?!(?:.*\/)?(?!\.\.?(?:\/|$))[. ]+(?:\/|$))/,
    "must not contain a segment made only of dots and spaces ('...', '.. '), which Windows can trim to '..' or to nothing",
  )
  .regex(
    /^(?!.*[^/. ][. ]+(?:\/|$))/,
    "must not contain a segment ending with '.' or a space: Windows drops them, so the path would name another file",
  )
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
  .regex(/^[^\u0000-\u001f\u007f]*$/, { message: "must not contain control characters", abort: true })
  // Aborted above for NUL, a control character: this adds only lone surrogates.
  .regex(STORABLE_TEXT_PATTERN, STORABLE_TEXT_ERROR);
