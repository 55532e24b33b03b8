import type { z } from "zod";
import { type FieldError, formatFieldPath } from "./field-error.js";

/** Says why `key` is not accepted in the object at `objectPath`. */
export type UnknownKeyDescriber = (key: string, objectPath: readonly PropertyKey[]) => string;

/** The most problems a refusal names: enough to fix a request, never a copy of a hostile one. */
const MAX_FIELD_ERRORS = 20;

/**
 * Bytes of JSON kept of a path or message: a field name may be as long as the body that carries it. With
 * MAX_FIELD_ERRORS, this keeps a refusal's body under 16 KiB, whatever the names in the request.
 */
const MAX_FIELD_TEXT_BYTES = 200;

/** `text` cut to MAX_FIELD_TEXT_BYTES as JSON writes it: a control character costs 6 bytes (`\u0001`). */
function clip(text: string): string {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    bytes += code < 0x20 ? 6 : code === 0x22 || code === 0x5c ? 2 : code < 0x80 ? 1 : 3;
    // Room for the ellipsis (3 bytes), and no surrogate pair cut in half.
    if (bytes > MAX_FIELD_TEXT_BYTES - 3) {
      const end = code >= 0xdc00 && code <= 0xdfff ? i - 1 : i;
      return `${text.slice(0, end)}…`;
    }
  }
  return text;
}

/** A refusal's field errors, and the one line its message quotes. */
export interface FieldErrorReport {
  /** At most MAX_FIELD_ERRORS problems, then `{ path: "", message: "… and N more" }` when there are more. */
  fields: FieldError[];
  summary: string;
}

/**
 * Flattens zod issues into one FieldError per failing field (an unknown-keys issue becomes one per key), the
 * first MAX_FIELD_ERRORS of them: the rest are only counted, so a body of a million unknown keys costs no more
 * to describe than one of twenty. `subject` names the document in the summary.
 */
export function reportFieldErrors(
  subject: string,
  issues: readonly z.core.$ZodIssue[],
  describeUnknownKey: UnknownKeyDescriber,
): FieldErrorReport {
  const fields: FieldError[] = [];
  let total = 0;
  const add = (path: readonly PropertyKey[], message: () => string) => {
    if (fields.length < MAX_FIELD_ERRORS) {
      fields.push({ path: clip(formatFieldPath(path)), message: clip(message()) });
    }
  };
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys.slice(0, MAX_FIELD_ERRORS - fields.length)) {
        add([...issue.path, key], () => describeUnknownKey(key, issue.path));
      }
      total += issue.keys.length;
    } else {
      add(issue.path, () => issue.message);
      total++;
    }
  }
  const summary = summarizeFieldErrors(subject, fields, total);
  if (total > fields.length) fields.push({ path: "", message: `… and ${total - fields.length} more` });
  return { fields, summary };
}

/** One line for a whole list: the first errors in full, then how many more (of `total`, when only some are kept). */
export function summarizeFieldErrors(
  subject: string,
  fields: readonly FieldError[],
  total = fields.length,
): string {
  // A whole-document error reads "<subject> must …" for a bare rule; any other message says enough itself.
  const describe = (error: FieldError) => {
    if (error.path !== "") return `${error.path} ${error.message}`;
    return error.message.startsWith("must") ? `${subject} ${error.message}` : error.message;
  };
  const shown = fields.slice(0, 3).map(describe);
  const more = total > shown.length ? ` (and ${total - shown.length} more)` : "";
  return `${shown.join("; ")}${more}`;
}
