const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * The `,` and `:` of JSON text outside its strings, counted up to `max + 1`: one for each array item and object
 * member after the first, so about the number of values, found without building any. Strings are skipped with
 * `indexOf`, so a body of long strings costs little more than one of none. Text that is not JSON is counted all
 * the same; JSON.parse refuses it after.
 */
export function countJsonSeparators(text: string, max: number): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = closingQuote(text, i);
      if (i < 0) break;
    } else if ((code === COMMA || code === COLON) && ++count > max) break;
  }
  return count;
}

/** The index of the quote that closes the string opened at `open`, or -1. */
function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at >= 0 && isEscaped(text, at)) at = text.indexOf('"', at + 1);
  return at;
}

/** Whether the character at `at` follows an odd run of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}
