import { countTokens } from "gpt-tokenizer";

/**
 * BPE tokenizing is quadratic in a run of text with no space or punctuation to split it: 262,144 repeated
 * letters (one tool output the service accepts) would hold the event loop for a minute. Texts are counted in
 * slices of at most this many characters instead: each slice boundary may split a token, so a long text is
 * overcounted by at most one token a slice (under 1 %), and no text costs more than its length times a constant.
 */
const SLICE_CHARS = 512;

type CountOptions = Parameters<typeof countTokens>[1];

/** `text` in slices of at most SLICE_CHARS characters, never between the halves of a surrogate pair. */
function* slicesOf(text: string): Generator<string> {
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + SLICE_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    yield text.slice(at, end);
    at = end;
  }
}

/** The o200k tokens of `text`, counted slice by slice: exact for a short text, at most a little over for a long one. */
export function estimateTokens(text: string, options?: CountOptions): number {
  if (text.length <= SLICE_CHARS) return countTokens(text, options);
  let tokens = 0;
  for (const slice of slicesOf(text)) tokens += countTokens(slice, options);
  return tokens;
}

/** The longest start of `text`, ending at a slice boundary, whose estimate is at most `maxTokens`. */
export function startWithinTokens(text: string, maxTokens: number): string {
  let tokens = 0;
  let end = 0;
  for (const slice of slicesOf(text)) {
    tokens += countTokens(slice);
    if (tokens > maxTokens) break;
    end += slice.length;
  }
  return text.slice(0, end);
}
