import type { InvokeFailure } from "@aptix/contracts";
import type { Context } from "hono";
import { RateLimiterMemory } from "rate-limiter-flexible";
import type { AppEnv } from "../app-env.js";
import { rateLimited } from "../rate-limited.js";

/** Failed authentications a client address may make in a minute (docs/http-api.md, Limits). */
export const MAX_AUTH_FAILURES_PER_MINUTE = 20;

/** Counts one failed authentication of the request, and says how to answer it. */
export type AuthFailure = (c: Context<AppEnv>, unauthorized: InvokeFailure) => Promise<InvokeFailure>;

/**
 * Counts failed authentications per client address (`c.var.clientAddress`, on this instance). Past 20 in a minute,
 * the address's next failures are answered 429 `RATE_LIMITED` with `Retry-After` instead of `unauthorized`,
 * until that minute ends; a request whose key is valid never comes here, so it is served whatever its address
 * did. Many tenants share an address (a NAT, a proxy not in APTIX_TRUSTED_PROXIES): anyone's wrong keys must not
 * lock them out. Keys of 128 bits and more are what make guessing hopeless; this tells a guesser to back off and
 * shows it in `aptix_rate_limited_total`. The answer costs the same either way: the key was checked first.
 */
export function authFailureLimit(): AuthFailure {
  const failures = new RateLimiterMemory({ points: MAX_AUTH_FAILURES_PER_MINUTE, duration: 60 });
  return async (c, unauthorized) => {
    const counted = await failures.penalty(c.var.clientAddress ?? "unknown");
    if (counted.consumedPoints <= MAX_AUTH_FAILURES_PER_MINUTE) return unauthorized;
    return rateLimited(
      `Too many failed authentications from this address: at most ${MAX_AUTH_FAILURES_PER_MINUTE} a minute`,
      counted.msBeforeNext,
    );
  };
}
