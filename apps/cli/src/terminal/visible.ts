/**
 * Characters a terminal acts on instead of showing, or that show nothing: C0 controls but tab and newline (ESC
 * starts cursor moves, line erases and title changes; CR rewrites a line), DEL, C1 controls (0x9b is a CSI of its
 * own); the bidi marks, embeddings, overrides and isolates that reorder how a line reads (U+061C, U+200E–U+200F,
 * U+202A–U+202E, U+2066–U+2069: "Trojan Source"); and what has no width, so that text hides in a line that looks
 * harmless: zero-width spaces and joiners (U+200B–U+200D), the word joiner and invisible operators
 * (U+2060–U+2064), the deprecated format controls (U+206A–U+206F), the BOM (U+FEFF), the soft hyphen (U+00AD),
 * the combining grapheme joiner (U+034F), the Mongolian vowel separator (U+180E), the Hangul filler (U+3164),
 * the variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF), which ride unseen on the character before them, and
 * the tag characters (U+E0000–U+E007F), which spell out whole ASCII text unseen; and the line and paragraph
 * separators (U+2028–U+2029), which some terminals and editors break a line at.
 */
const UNPRINTABLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: each code point is matched alone, combining or not.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u034f\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/gu;

/**
 * Text from outside the CLI (the model, the service, file names), made safe to print: each unprintable
 * character becomes its escape, `\x1b`, `\u202e` or `\u{e0041}`, so nothing it holds can move the cursor, hide
 * lines or text, or set the window title. Per character, so streamed text split in the middle of a sequence is
 * made safe all the same.
 */
export function visible(text: string): string {
  return text.replace(UNPRINTABLE, (char) => {
    const code = char.codePointAt(0) ?? 0;
    if (code <= 0xff) return `\\x${hex(code, 2)}`;
    return code <= 0xffff ? `\\u${hex(code, 4)}` : `\\u{${hex(code, 5)}}`;
  });
}

/**
 * `JSON.stringify(value)` with the unprintable characters it leaves raw (DEL, C1, bidi, zero-width) escaped as JSON
 * `\uXXXX` (a tag character or a supplementary variation selector as its two surrogates).
 */
export function visibleJson(value: unknown): string {
  return JSON.stringify(value).replace(UNPRINTABLE, (char) =>
    [...Array(char.length).keys()].map((index) => `\\u${hex(char.charCodeAt(index), 4)}`).join(""),
  );
}

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, "0");
}
