import type { MiddlewareHandler } from "hono";
import type { Logger } from "pino";
import type { AppEnv } from "../app-env.js";

/**
 * The request's logger and its access line. Each request gets a pino child logger bound to its request id (the
 * `X-Request-Id` answered), kept as `c.var.logger`: every line logged while it is handled carries the id. Once
 * answered, one `request` line naming the client's address (a trusted proxy's client, not the proxy): a failed
 * answer carries its errors (code, message, details), so a 500 or 502 can be explained from the log alone;
 * server-side failures log at `error`, the caller's mistakes at `info`.
 */
export function accessLog(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const log = logger.child({ requestId: c.get("requestId") });
    c.set("logger", log);
    await next();
    const errors = c.get("resultErrors");
    log[c.res.status >= 500 ? "error" : "info"](
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        durationMs: Math.round(performance.now() - started),
        clientAddress: c.var.clientAddress,
        principal: c.get("principal"),
        ...(errors === undefined ? {} : { errors }),
      },
      "request",
    );
  };
}
