import type { z } from "zod";
import { type FieldError, formatFieldPath } from "./field-error.js";

/** Says why `key` is not accepted in the object at `objectPath`. */
export type UnknownKeyDescriber = (key: string, objectPath: readonly PropertyKey[]) => string;

/** Flattens zod issues into one FieldError per failing field (an unknown-keys issue becomes one per key). */
export function toFieldErrors(
  issues: readonly z.core.$ZodIssue[],
  describeUnknownKey: UnknownKeyDescriber,
): FieldError[] {
  const errors: FieldError[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        errors.push({
          path: formatFieldPath([...issue.path, key]),
          message: describeUnknownKey(key, issue.path),
        });
      }
    } else {
      errors.push({ path: formatFieldPath(issue.path), message: issue.message });
    }
  }
  return errors;
}

/** One line for a whole list: the first errors in full, then how many more. */
export function summarizeFieldErrors(subject: string, errors: readonly FieldError[]): string {
  // A whole-document error reads "<subject> must …" for a bare rule; any other message says enough itself.
  const describe = (error: FieldError) => {
    if (error.path !== "") return `${error.path} ${error.message}`;
    return error.message.startsWith("must") ? `${subject} ${error.message}` : error.message;
  };
  const shown = errors.slice(0, 3).map(describe);
  const more = errors.length > shown.length ? ` (and ${errors.length - shown.length} more)` : "";
  return `${shown.join("; ")}${more}`;
}
