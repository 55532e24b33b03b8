/** How the client retries `SESSION_BUSY`, 429 and 503 answers, and how often it resumes a broken stream. */
export interface RetryOptions {
  /** Attempts in all, the first included (default 5); 1 never retries. A resumed stream gets as many reconnects. */
  maxAttempts?: number;
  /** The first backoff (default 250 ms); it doubles on each attempt, with jitter, up to `maxDelayMs`. */
  baseDelayMs?: number;
  /** The longest backoff (default 10,000 ms). A longer `Retry-After` is still honoured. */
  maxDelayMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = { maxAttempts: 5, baseDelayMs: 250, maxDelayMs: 10_000 };
