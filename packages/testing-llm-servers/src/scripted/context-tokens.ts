/**
 * The tokens a request puts in the model's context, as both scripted servers count them: text through the o200k
 * tokenizer (what OpenAI's current models use; for Claude it is a close, deterministic stand-in), a fixed cost per
 * item and per media part. Each API's counter (`countOpenAIContextTokens`, `countAnthropicContextTokens`) says
 * which fields of its items are text.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

/**
 * Tokens the chat format adds around each item it holds (a message, a function call or output, a tool
 * definition, the instructions): role and separator tokens. OpenAI's cookbook counts 3 per message; one more
 * keeps the count on the safe side of the real one.
 */
export const ITEM_OVERHEAD_TOKENS = 4;

/**
 * An image, a file or a PDF the server does not decode: about what a one-megapixel picture costs either API.
 * Counting its base64 text instead would put one picture past any window.
 */
export const MEDIA_PART_TOKENS = 1_000;

/** Text that looks like a special token (`<|endoftext|>`) is counted as text, as the APIs read it, never refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * A text longer than `EXACT_UP_TO_CHARS` is counted in pieces of `PIECE_CHARS`: BPE is quadratic in a run with no
 * space (262,144 repeated letters would take a minute), and a piece boundary adds at most one token.
 */
const EXACT_UP_TO_CHARS = 8_192;
const PIECE_CHARS = 512;

/** The o200k tokens of a text. */
function textTokens(text: string): number {
  if (text.length <= EXACT_UP_TO_CHARS) return text.length === 0 ? 0 : countTokens(text, AS_TEXT);
  let tokens = 0;
  for (let at = 0; at < text.length; at += PIECE_CHARS)
    tokens += countTokens(text.slice(at, at + PIECE_CHARS), AS_TEXT);
  return tokens;
}

/**
 * The tokens of a text field, or of any other value as JSON (tool inputs, tool definitions, items the counters do
 * not know); nothing for `undefined`.
 */
export function valueTokens(value: unknown): number {
  return textTokens(typeof value === "string" ? value : (JSON.stringify(value) ?? ""));
}

/** The tokens of a list: the sum of its values' tokens. */
export function sumTokens(values: readonly unknown[], tokensOf: (value: unknown) => number): number {
  return values.reduce<number>((total, value) => total + tokensOf(value), 0);
}

/** Each item of a list (messages, input items, tool definitions) plus `ITEM_OVERHEAD_TOKENS`; nothing for a non-list. */
export function itemListTokens(items: unknown, tokensOf: (item: unknown) => number): number {
  return Array.isArray(items) ? sumTokens(items, (item) => ITEM_OVERHEAD_TOKENS + tokensOf(item)) : 0;
}

/** One item that may be absent (the instructions, a system prompt) plus `ITEM_OVERHEAD_TOKENS`, or nothing. */
export function optionalItemTokens(item: unknown, tokensOf: (item: unknown) => number): number {
  return item === undefined || item === null ? 0 : ITEM_OVERHEAD_TOKENS + tokensOf(item);
}

/** Content: a text, or a list of parts (blocks) each counted by `partTokens`. */
export function contentTokens(content: unknown, partTokens: (part: unknown) => number): number {
  return Array.isArray(content) ? sumTokens(content, partTokens) : valueTokens(content);
}

/** A record's fields, or `undefined` when it is not an object (hostile bodies carry anything anywhere). */
export function fieldsOf(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** Throws unless `tokens` is a window a test can mean: a positive whole number of tokens, or `undefined` (none). */
export function checkedContextWindow(tokens: unknown): number | undefined {
  if (tokens === undefined) return undefined;
  if (typeof tokens !== "number" || !Number.isSafeInteger(tokens) || tokens <= 0) {
    throw new RangeError(
      `testing-llm-servers: contextWindowTokens must be a positive whole number of tokens or undefined, got ${String(tokens)}`,
    );
  }
  return tokens;
}
