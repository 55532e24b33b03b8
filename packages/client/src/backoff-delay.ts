import type { RetryOptions } from "./retry-options.js";

/**
 * How long to wait before attempt `attempt + 1`: exponential backoff with jitter (half fixed, half random),
 * and never less than the server's `Retry-After` (seconds, or an HTTP date).
 */
export function backoffDelay(
  attempt: number,
  retryAfter: string | null,
  options: Required<RetryOptions>,
): number {
  const exponential = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  const jittered = exponential / 2 + (Math.random() * exponential) / 2;
  return Math.max(retryAfterMs(retryAfter), jittered);
}

function retryAfterMs(value: string | null): number {
  if (value === null || value.trim() === "") return 0;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? 0 : Math.max(0, date - Date.now());
}
