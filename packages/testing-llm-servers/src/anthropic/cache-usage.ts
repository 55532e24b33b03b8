/**
 * The prompt-cache accounting of the Messages API: the prefix up to each `cache_control` breakpoint is written to
 * the cache, and a later request whose context starts with a written prefix reads it from there. The real API
 * looks for a written prefix at each breakpoint and at the blocks before it (about 20), and caches nothing shorter
 * than the model's minimum; a top-level `cache_control` puts a breakpoint on the last block.
 */
import type { PromptCache } from "../scripted/prompt-cache.js";
import type { AnthropicContextSegment } from "./context-tokens.js";

/** How far before a breakpoint the API looks for a prefix written earlier. */
const LOOKBACK_SEGMENTS = 20;

const FIVE_MINUTES_MS = 5 * 60 * 1000;
const ONE_HOUR_MS = 60 * 60 * 1000;

/** The input counts of a reply's usage, as the API splits them. */
export interface AnthropicCacheUsage {
  /** The tokens after the last breakpoint (all of them without one): billed at the full price. */
  input_tokens: number;
  /** The tokens from the prefix read to the last breakpoint: written to the cache. */
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

function ttlOf(cacheControl: unknown): number {
  return (cacheControl as { ttl?: unknown }).ttl === "1h" ? ONE_HOUR_MS : FIVE_MINUTES_MS;
}

/**
 * Reads and writes `cache` for a request the model runs, and says how its context tokens split. `scope` keeps
 * models apart; `topLevel` is the request's own `cache_control`.
 */
export function anthropicCacheUsage(input: {
  cache: PromptCache;
  scope: string;
  segments: readonly AnthropicContextSegment[];
  topLevel: unknown;
  minCacheableTokens: number;
}): AnthropicCacheUsage {
  const { cache, segments } = input;
  const prefixes = cache.prefixes(input.scope, segments);
  const total = prefixes.at(-1)?.tokens ?? 0;
  const breakpoints = new Map<number, unknown>();
  segments.forEach((segment, index) => {
    if (segment.cacheControl !== undefined) breakpoints.set(index, segment.cacheControl);
  });
  if (input.topLevel !== undefined && input.topLevel !== null && segments.length > 0) {
    breakpoints.set(segments.length - 1, input.topLevel);
  }
  const cached = [...breakpoints.keys()]
    .sort((a, b) => a - b)
    .filter((index) => (prefixes[index]?.tokens ?? 0) >= input.minCacheableTokens);

  let readAt = -1;
  for (const breakpoint of cached) {
    for (let index = breakpoint; index >= 0 && index > breakpoint - LOOKBACK_SEGMENTS; index--) {
      const prefix = prefixes[index];
      if (prefix && cache.holds(prefix)) {
        readAt = Math.max(readAt, index);
        break;
      }
    }
  }
  const read = readAt >= 0 ? (prefixes[readAt]?.tokens ?? 0) : 0;
  const created = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
  let written = read;
  for (const breakpoint of cached) {
    const prefix = prefixes[breakpoint];
    if (!prefix) continue;
    const ttl = ttlOf(breakpoints.get(breakpoint));
    if (prefix.tokens > written) {
      created[ttl === ONE_HOUR_MS ? "ephemeral_1h_input_tokens" : "ephemeral_5m_input_tokens"] +=
        prefix.tokens - written;
      written = prefix.tokens;
    }
    cache.write(prefix, ttl);
  }
  const readPrefix = prefixes[readAt];
  if (readPrefix) cache.write(readPrefix, FIVE_MINUTES_MS);
  return {
    input_tokens: total - written,
    cache_creation_input_tokens: written - read,
    cache_read_input_tokens: read,
    cache_creation: created,
  };
}
