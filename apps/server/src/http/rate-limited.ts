import { fail, type InvokeFailure } from "@aptix/contracts";

/**
 * 429 `RATE_LIMITED`, saying when to try again in whole seconds (at least 1): `details.retryAfterSeconds`,
 * which `sendResult` also sends as `Retry-After`.
 */
export function rateLimited(message: string, retryAfterMs: number): InvokeFailure {
  const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return fail("RATE_LIMITED", `${message}; try again in ${retryAfterSeconds} s.`, { retryAfterSeconds });
}
