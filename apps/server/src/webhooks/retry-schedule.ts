const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** How long after each failed attempt a delivery is tried again: after the last, it is dropped. */
export const RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND,
  30 * SECOND,
  2 * MINUTE,
  10 * MINUTE,
  1 * HOUR,
  6 * HOUR,
];

/** The wait before the next attempt of a delivery whose attempt number `failed` (0 the first) just failed; undefined: drop it. */
export function retryDelayMs(failed: number): number | undefined {
  return RETRY_DELAYS_MS[failed];
}
