import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { AppEnv } from "../app-env.js";

/** What the request metrics are told; the service's ServiceMetrics. */
interface RequestMetricsSink {
  observeRequest(labels: { method: string; route: string; status: number }, seconds: number): void;
  countRateLimited(): void;
}

/** The methods OpenTelemetry's HTTP conventions name; any other is `_OTHER`, so no client can add series. */
const KNOWN_METHODS = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "PATCH",
  "OPTIONS",
  "CONNECT",
  "TRACE",
]);

/**
 * Times each request by the route that answered it, as registered (`/v1/sessions/:sessionId`, never the path
 * asked for: one series per route, not per session), empty for a path no route serves; a streamed answer until
 * its stream opened. Counts each request answered 429 RATE_LIMITED, whichever limit refused it (request rate,
 * running turns, failed authentications): every refusal goes out through `sendResult`, which keeps its errors.
 */
export function requestMetrics(metrics: RequestMetricsSink): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const route = routePath(c, -1);
    metrics.observeRequest(
      {
        method: KNOWN_METHODS.has(c.req.method) ? c.req.method : "_OTHER",
        route: route === undefined || route.endsWith("*") ? "" : route,
        status: c.res.status,
      },
      (performance.now() - started) / 1000,
    );
    if (c.get("resultErrors")?.[0]?.code === "RATE_LIMITED") metrics.countRateLimited();
  };
}
