import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env.js";

/**
 * Calls `count` once per request answered 429 RATE_LIMITED, whichever limit refused it (request rate, running
 * turns, failed authentications): every refusal goes out through `sendResult`, which keeps its errors.
 */
export function rateLimitCounting(count: () => void): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (c.get("resultErrors")?.[0]?.code === "RATE_LIMITED") count();
  };
}
