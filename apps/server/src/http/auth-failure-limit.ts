import type { MiddlewareHandler } from "hono";
import { RateLimiterMemory } from "rate-limiter-flexible";
import type { AppEnv } from "./app-env.js";
import { clientAddress } from "./client-address.js";
import { rateLimited } from "./rate-limited.js";
import { sendResult } from "./send-result.js";

/** Failed authentications a client address may make in a minute (docs/http-api.md, Limits). */
export const MAX_AUTH_FAILURES_PER_MINUTE = 20;

/**
 * Counts the requests answered 401 per client address (the socket's, on this instance). Once an address has
 * had its 20 in a minute, every request from it is refused 429 `RATE_LIMITED` until that minute ends, one with
 * a correct key too: otherwise a guesser would still tell the right key from wrong ones at full speed. A
 * request from an address without failures costs one map lookup.
 */
export function authFailureLimit(): MiddlewareHandler<AppEnv> {
  const failures = new RateLimiterMemory({ points: MAX_AUTH_FAILURES_PER_MINUTE, duration: 60 });
  return async (c, next) => {
    const address = clientAddress(c) ?? "unknown";
    const counted = await failures.get(address);
    if (counted !== null && counted.remainingPoints === 0) {
      return sendResult(
        c,
        rateLimited(
          `Too many failed authentications from this address: at most ${MAX_AUTH_FAILURES_PER_MINUTE} a minute`,
          counted.msBeforeNext,
        ),
      );
    }
    await next();
    if (c.res.status === 401) await failures.penalty(address);
  };
}
