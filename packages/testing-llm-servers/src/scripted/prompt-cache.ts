/**
 * The provider-side prompt cache both scripted servers imitate: a request's context is a list of segments (tool
 * definitions, the system prompt or its blocks, messages or their blocks, input items), and the cache holds the
 * prefixes of such lists that earlier requests wrote, each until its time to live runs out. A prefix is named by a
 * hash chained over its segments' content, so one differing segment changes the name of every prefix after it.
 */
import { createHash } from "node:crypto";

/** One segment of a request's context: what the model reads (without any cache marker) and its tokens. */
export interface CacheSegment {
  /** The segment's content, as JSON: equal content, equal prefix. */
  content: unknown;
  tokens: number;
}

/** A prefix of a request's context: its name and the tokens of its segments, from the first through this one. */
export interface CachePrefix {
  hash: string;
  tokens: number;
}

export class PromptCache {
  readonly #expiresAt = new Map<string, number>();

  /** The prefixes of `segments`, one per segment, in order; `scope` (model, cache key) keeps caches apart. */
  prefixes(scope: string, segments: readonly CacheSegment[]): CachePrefix[] {
    let hash = createHash("sha256").update(scope).digest("hex");
    let tokens = 0;
    return segments.map((segment) => {
      hash = createHash("sha256")
        .update(hash)
        .update(JSON.stringify(segment.content) ?? "")
        .digest("hex");
      tokens += segment.tokens;
      return { hash, tokens };
    });
  }

  /** Whether an earlier request wrote this prefix and it has not expired. */
  holds(prefix: CachePrefix): boolean {
    const expiresAt = this.#expiresAt.get(prefix.hash);
    return expiresAt !== undefined && expiresAt > Date.now();
  }

  /** Writes a prefix (or refreshes it, as a read does) for `ttlMs` from now. */
  write(prefix: CachePrefix, ttlMs: number): void {
    this.#expiresAt.set(prefix.hash, Math.max(this.#expiresAt.get(prefix.hash) ?? 0, Date.now() + ttlMs));
  }

  clear(): void {
    this.#expiresAt.clear();
  }
}
