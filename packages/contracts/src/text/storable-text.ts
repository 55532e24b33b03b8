import { z } from "zod";

/**
 * Free text may hold anything Postgres can keep, which rules out two things: U+0000 (text and jsonb refuse
 * it) and a lone UTF-16 surrogate, half of a character such as an emoji, which an editor leaves when it cuts
 * text inside one (jsonb refuses its `\uD800` escape). Refusing both at the edge names the field instead of
 * failing the turn later. Binary content travels as base64.
 *
 * Without the `u` flag the pattern reads UTF-16 units, with it code points (JSON Schema validators such as Ajv
 * use `u`): either way a surrogate passes only as half of a pair.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing NUL is the point.
export const STORABLE_TEXT_PATTERN = /^(?:[^\u0000\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;

export const NO_NUL_MESSAGE = "must not contain the NUL character (U+0000); send binary content as base64";

export const LONE_SURROGATE_MESSAGE =
  "must be well-formed UTF-16: it holds a lone surrogate, half of a character such as an emoji (was the text cut inside one?)";

/** Says which of the two a text that fails STORABLE_TEXT_PATTERN holds. */
export function unstorableTextMessage(text: unknown): string {
  return typeof text === "string" && text.includes("\u0000") ? NO_NUL_MESSAGE : LONE_SURROGATE_MESSAGE;
}

/** The params of `.regex(STORABLE_TEXT_PATTERN, STORABLE_TEXT_ERROR)`: the message says what the text holds. */
export const STORABLE_TEXT_ERROR = {
  error: (issue: { input?: unknown }) => unstorableTextMessage(issue.input),
};

/**
 * A free-text field: storable, at most `maxChars` characters when given, and not empty unless `empty` allows it.
 * Every free-text field of the contracts is one of these, so each refuses what Postgres cannot keep.
 */
export function freeText({ maxChars, empty = false }: { maxChars?: number; empty?: boolean } = {}) {
  let text = z.string();
  if (!empty) text = text.min(1, onStringsOnly("must not be empty"));
  if (maxChars !== undefined)
    text = text.max(maxChars, onStringsOnly(`must be at most ${maxChars} characters`));
  return text.regex(STORABLE_TEXT_PATTERN, STORABLE_TEXT_ERROR);
}

/**
 * A length check's params, run on strings only. zod's default runs it on any value with a `length`, even after
 * the type check failed, and comparing a `length` that is an object without a prototype throws. zod honours
 * `when` on every check, but its types offer it on refinements only.
 */
function onStringsOnly(message: string): { message: string } {
  const when = (payload: { value: unknown }) => typeof payload.value === "string";
  return { message, when } as { message: string };
}
