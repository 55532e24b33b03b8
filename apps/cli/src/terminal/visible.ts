/**
 * Characters a terminal acts on instead of showing: C0 controls but tab and newline (ESC starts cursor moves,
 * line erases and title changes; CR rewrites a line), DEL, C1 controls (0x9b is a CSI of its own) and the bidi
 * embeddings, overrides and isolates that reorder how a line reads.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text from outside the CLI (the model, the service, file names), made safe to print: each unprintable
 * character becomes its escape, `\x1b` or `\u202e`, so nothing it holds can move the cursor, hide lines or set
 * the window title. Per character, so streamed text split in the middle of a sequence is made safe all the same.
 */
export function visible(text: string): string {
  return text.replace(UNPRINTABLE, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`;
  });
}

/** `JSON.stringify(value)` with the unprintable characters it leaves raw (DEL, C1, bidi) escaped as JSON `\uXXXX`. */
export function visibleJson(value: unknown): string {
  return JSON.stringify(value).replace(UNPRINTABLE, (char) => `\\u${hex(char.charCodeAt(0), 4)}`);
}

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, "0");
}
