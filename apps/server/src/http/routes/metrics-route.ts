import { createHash, timingSafeEqual } from "node:crypto";
import { fail } from "@aptix/contracts";
import { createRoute, type OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import { isLoopback } from "../../config/server-env.js";
import type { ServiceMetrics } from "../../telemetry/service-metrics.js";
import type { AppEnv } from "../app-env.js";
import { authFailureLimit } from "../auth-failure-limit.js";
import { clientAddress } from "../client-address.js";
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
    "rate-limited requests, busy database connections, and the process's own. It answers callers on loopback, " +
    "and others sending `Authorization: Bearer <APTIX_METRICS_TOKEN>` when that token is set.",
  // Not the API keys' scheme: its own token, or none from loopback.
  security: PUBLIC,
  responses: {
    200: METRICS_TEXT,
    // 401 without a valid token off loopback; 429 after too many failed guesses from one address.
    ...failuresOf(401, 429),
  },
});

/**
 * `GET /metrics` in Prometheus's text format. It answers loopback callers (a scraper beside the service), and
 * others sending `Authorization: Bearer <token>` when `token` (APTIX_METRICS_TOKEN) is set; anyone else gets
 * 401 UNAUTHORIZED, the metrics telling nothing of the service to the network. With a token, failed guesses are
 * limited per address as API keys' are.
 */
export function metricsRoute(
  app: OpenAPIHono<AppEnv>,
  metrics: ServiceMetrics,
  token: string | undefined,
): void {
  const expected = token === undefined ? undefined : digest(token);
  const allowed = (c: Context<AppEnv>) => {
    const remote = clientAddress(c);
    // In-process requests (tests) have no socket: they come from this process.
    if (remote === undefined || isLoopback(remote)) return true;
    const offered = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    return expected !== undefined && offered !== undefined && timingSafeEqual(digest(offered), expected);
  };
  if (expected !== undefined) app.use("/metrics", authFailureLimit());
  app.openapi(metricsDefinition, async (c) => {
    if (!allowed(c)) {
      c.header("WWW-Authenticate", 'Bearer realm="aptix-metrics"');
      return sendResult(
        c,
        fail(
          "UNAUTHORIZED",
          expected === undefined
            ? "GET /metrics answers loopback callers only; set APTIX_METRICS_TOKEN to let others scrape it."
            : "GET /metrics answers loopback callers, or callers sending 'Authorization: Bearer <APTIX_METRICS_TOKEN>'.",
        ),
      );
    }
    return c.text(await metrics.registry.metrics(), 200, { "content-type": metrics.registry.contentType });
  });
}
