import type { MiddlewareHandler } from "hono";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { AppEnv } from "../app-env.js";
import { rateLimited } from "../rate-limited.js";
import { sendResult } from "../send-result.js";

/**
 * At most `perMinute` requests a minute per principal on this instance (`APTIX_RATE_LIMIT_RPM`), past it 429
 * `RATE_LIMITED` until the principal's window ends. The count is kept in this process's memory: a request costs
 * a map lookup and an increment (a window's timer is set once per principal a minute), and no database round trip.
 */
export function requestRateLimit(perMinute: number): MiddlewareHandler<AppEnv> {
  const limiter = new RateLimiterMemory({ points: perMinute, duration: 60 });
  return async (c, next) => {
    // consume rejects with a RateLimiterRes once the window's points are used up (the memory store never fails).
    const refused = await limiter.consume(c.get("principal")).then(
      () => undefined,
      (outcome: unknown) => {
        if (outcome instanceof RateLimiterRes) return outcome;
        throw outcome;
      },
    );
    if (refused === undefined) return next();
    return sendResult(
      c,
      rateLimited(
        `Too many requests: this principal may send ${perMinute} a minute (APTIX_RATE_LIMIT_RPM)`,
        refused.msBeforeNext,
      ),
    );
  };
}
