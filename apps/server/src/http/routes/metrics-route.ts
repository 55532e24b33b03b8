import { createHash, timingSafeEqual } from "node:crypto";
import { fail } from "@aptix/contracts";
import { createRoute, type OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import { isLoopback } from "../../config/server-env.js";
import type { ServiceMetrics } from "../../telemetry/service-metrics.js";
import type { AppEnv } from "../app-env.js";
import { forwardingHeader } from "../forwarding-header.js";
import type { AuthFailure } from "../middleware/auth-failure-limit.js";
import { failuresOf, PUBLIC } from "../openapi/responses.js";
import { sendResult } from "../send-result.js";

const digest = (text: string) => createHash("sha256").update(text).digest();

/** Typed as any response (as the shared ones are), so the route may also answer its 401 envelope. */
const METRICS_TEXT: RouteConfig["responses"][string] = {
  description: "The metrics, in Prometheus's text exposition format.",
  content: {
    "text/plain; version=0.0.4; charset=utf-8": {
      schema: { type: "string" },
      example: [
        "# HELP aptix_turns_total Rounds of turns run on this instance, by how they ended.",
        "# TYPE aptix_turns_total counter",
        'aptix_turns_total{outcome="completed"} 42',
        "",
      ].join("\n"),
    },
  },
};

const metricsDefinition = createRoute({
  method: "get",
  path: "/metrics",
  operationId: "getMetrics",
  tags: ["Service"],
  summary: "Prometheus metrics",
  description:
    "The service's metrics in Prometheus's text format: turns, LLM calls, tokens, tool calls, running turns, " +
    "rate-limited requests, busy database connections, and the process's own. It answers callers on loopback " +
    "that reach it directly (no `Forwarded`, `X-Forwarded-For` or `Via` header), and others sending " +
    "`Authorization: Bearer <APTIX_METRICS_TOKEN>` when that token is set.",
  // Not the API keys' scheme: its own token, or none from loopback.
  security: PUBLIC,
  responses: {
    200: METRICS_TEXT,
    // 401 without a valid token off loopback; 403 in local mode from elsewhere; 429 after too many failed
    // guesses from one address.
    ...failuresOf(401, 403, 429),
  },
});

/**
 * `GET /metrics` in Prometheus's text format. It answers loopback callers that came straight (a scraper beside
 * the service; a request through a proxy on this machine carries the proxy's loopback address, not its
 * caller's), and others sending `Authorization: Bearer <token>` when `token` (APTIX_METRICS_TOKEN) is set;
 * anyone else gets 401 UNAUTHORIZED, the metrics telling nothing of the service to the network. Failed guesses of
 * the token are counted by `authFailure`, as API keys' are.
 */
export function metricsRoute(
  app: OpenAPIHono<AppEnv>,
  options: { metrics: ServiceMetrics; token: string | undefined; authFailure: AuthFailure },
): void {
  const { metrics, token, authFailure } = options;
  const expected = token === undefined ? undefined : digest(token);
  const fromLoopback = (c: Context<AppEnv>) => {
    const remote = c.var.clientAddress;
    // In-process requests (tests) have no socket: they come from this process.
    return (remote === undefined || isLoopback(remote)) && forwardingHeader(c) === undefined;
  };
  const hasToken = (c: Context<AppEnv>) => {
    const offered = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    return expected !== undefined && offered !== undefined && timingSafeEqual(digest(offered), expected);
  };
  app.openapi(metricsDefinition, async (c) => {
    if (!fromLoopback(c) && !hasToken(c)) {
      const unauthorized = fail(
        "UNAUTHORIZED",
        expected === undefined
          ? "GET /metrics answers loopback callers only; set APTIX_METRICS_TOKEN to let others scrape it."
          : "GET /metrics answers loopback callers, or callers sending 'Authorization: Bearer <APTIX_METRICS_TOKEN>'.",
      );
      // Without a token there is nothing to guess: nothing to count.
      const answer = expected === undefined ? unauthorized : await authFailure(c, unauthorized);
      if (answer === unauthorized) c.header("WWW-Authenticate", 'Bearer realm="aptix-metrics"');
      return sendResult(c, answer);
    }
    return c.text(await metrics.registry.metrics(), 200, { "content-type": metrics.registry.contentType });
  });
}
