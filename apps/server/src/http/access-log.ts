import type { MiddlewareHandler } from "hono";
import type { Logger } from "../logging/logger.js";
import type { AppEnv } from "./app-env.js";

/**
 * One log line per request. A failed answer carries its errors (code, message, details), so a 500 or 502 can
 * be explained from the log alone; server-side failures log at `error`, the caller's mistakes at `info`.
 */
export function accessLog(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const errors = c.get("resultErrors");
    logger.log(c.res.status >= 500 ? "error" : "info", "request", {
      requestId: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round(performance.now() - started),
      principal: c.get("principal"),
      ...(errors === undefined ? {} : { errors }),
    });
  };
}
