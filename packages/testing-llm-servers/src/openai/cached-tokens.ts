/**
 * The prompt-cache accounting of the Responses API: a request whose context starts with a prefix an earlier
 * request of the same model and `prompt_cache_key` sent reads that prefix from the cache. As on the real API,
 * nothing under 1,024 tokens is cached and what is read counts in steps of 128 tokens; every prefix of a request
 * is written, for five minutes.
 */
import type { CacheSegment, PromptCache } from "../scripted/prompt-cache.js";

const CACHE_STEP_TOKENS = 128;
const RETENTION_MS = 5 * 60 * 1000;

/** Reads and writes `cache` for a request the model runs: its `cached_tokens`. */
export function openAICachedTokens(input: {
  cache: PromptCache;
  /** The model and the `prompt_cache_key`: calls under another key land on another cache. */
  scope: string;
  segments: readonly CacheSegment[];
  minCacheableTokens: number;
}): number {
  const prefixes = input.cache.prefixes(input.scope, input.segments);
  const read = prefixes.findLast((prefix) => input.cache.holds(prefix));
  for (const prefix of prefixes) {
    if (prefix.tokens >= input.minCacheableTokens) input.cache.write(prefix, RETENTION_MS);
  }
  if (read === undefined || read.tokens < input.minCacheableTokens) return 0;
  return Math.floor(read.tokens / CACHE_STEP_TOKENS) * CACHE_STEP_TOKENS;
}
