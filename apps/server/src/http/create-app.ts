import {
  type AgentExecuteRequest,
  fail,
  type InvokeResult,
  type InvokeWarning,
  WORKSPACE_LIMITS,
} from "@aptix/contracts";
import {
  type AgentService,
  type Clock,
  isStoreUnavailable,
  systemClock,
  type WorkspaceKnowledge,
} from "@aptix/core";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Tracer } from "@opentelemetry/api";
import { requestId } from "hono/request-id";
import type { Logger } from "pino";
import { DEFAULT_RATE_LIMIT_RPM } from "../config/server-env.js";
import { readPushBody } from "../knowledge/read-push-body.js";
import type { ServiceMetrics } from "../telemetry/service-metrics.js";
import type { AppEnv } from "./app-env.js";
import { accessLog } from "./middleware/access-log.js";
import { authFailureLimit } from "./middleware/auth-failure-limit.js";
import { BodiesInFlight } from "./middleware/bodies-in-flight.js";
import { clientAddressing } from "./middleware/client-address.js";
import { corsPolicy } from "./middleware/cors-policy.js";
import { localModeOnly } from "./middleware/local-mode.js";
import { principalMiddleware } from "./middleware/principal.js";
import { requestBody } from "./middleware/request-body.js";
import { requestMetrics } from "./middleware/request-metrics.js";
import { requestRateLimit } from "./middleware/request-rate-limit.js";
import { requestTracing } from "./middleware/request-tracing.js";
import { reportFault } from "./report-fault.js";
import { routeNotFound } from "./route-not-found.js";
import { chatRoutes } from "./routes/chat-routes.js";
import { consoleRoutes } from "./routes/console-routes.js";
import { docsRoutes } from "./routes/docs-routes.js";
import { executeRoute } from "./routes/execute-route.js";
import { healthRoutes, type ReadinessCheck } from "./routes/health-routes.js";
import { metricsRoute } from "./routes/metrics-route.js";
import { type ServiceDescription, serviceRoutes } from "./routes/service-routes.js";
import { sessionRoutes } from "./routes/session-routes.js";
import { usageRoutes } from "./routes/usage-routes.js";
import { type PushReader, workspaceRoutes } from "./routes/workspace-routes.js";
import { sendResult } from "./send-result.js";

export interface AppOptions {
  service: AgentService;
  /** The principals' workspace indexes (docs/knowledge.md); without it the workspace routes are not served. */
  knowledge?: WorkspaceKnowledge;
  /** Reads a push's body; default `readPushBody` on the event loop. The server passes its worker threads. */
  readPush?: PushReader;
  validate: (input: unknown) => InvokeResult<AgentExecuteRequest>;
  /** Principal by API key; empty for local mode. */
  apiKeys: ReadonlyMap<string, string>;
  maxBodyBytes: number;
  /** Requests a minute one principal may send to this instance (`APTIX_RATE_LIMIT_RPM`, default 600). */
  rateLimitRpm?: number;
  /** Origins whose pages may call the service from a browser (`APTIX_CORS_ORIGINS`); none by default. */
  corsOrigins?: readonly string[];
  /** Proxies (`address/prefix`) whose X-Forwarded-For names the client (`APTIX_TRUSTED_PROXIES`); none by default. */
  trustedProxies?: readonly string[];
  /** How often an idle event stream gets a comment line. */
  heartbeatMs?: number;
  readiness: ReadinessCheck;
  logger: Logger;
  /** Served at `GET /metrics`; it also counts the requests refused RATE_LIMITED. */
  metrics?: ServiceMetrics;
  /** Lets callers other than loopback read `/metrics` (`APTIX_METRICS_TOKEN`). */
  metricsToken?: string;
  /** Gives each request a server span; absent when traces are not exported. */
  tracer?: Tracer;
  /** The time the usage route's default range (the current UTC month) is taken from; the system's by default. */
  clock?: Clock;
  /** Warnings every answer carries, whatever it answers (the demo model's); none by default. */
  notices?: readonly InvokeWarning[];
  /** What `GET /v1/service` answers; without it the route is not served. */
  description?: ServiceDescription;
}

/** The HTTP interface of docs/http-api.md. It only translates: the turn lifecycle lives in core. */
export function createApp(options: AppOptions): OpenAPIHono<AppEnv> {
  const { logger, corsOrigins = [] } = options;
  // Routes are defined with their OpenAPI description, from which /openapi.json is generated.
  const app = new OpenAPIHono<AppEnv>();

  // First: traces, logs and limits all name the client this resolves.
  app.use(clientAddressing(options.trustedProxies ?? []));
  if (options.tracer) app.use(requestTracing(options.tracer));
  app.use(requestId());
  app.use(accessLog(logger));
  const { notices = [] } = options;
  if (notices.length > 0) {
    app.use(async (c, next) => {
      c.set("notices", notices);
      await next();
    });
  }
  if (corsOrigins.length > 0) app.use(corsPolicy(corsOrigins));
  const { metrics } = options;
  if (metrics) app.use(requestMetrics(metrics));
  app.onError((error, c) => {
    // The store could not reach its database (the adapter says so with StoreUnavailableError): an outage,
    // not a bug. The request may be sent again once the database is back.
    if (isStoreUnavailable(error)) {
      c.var.logger.warn({ error: error.message }, "database unreachable");
      return sendResult(
        c,
        fail("NOT_READY", "The service cannot reach its database; send the request again later.", {
          retryable: true,
        }),
      );
    }
    reportFault(c, error, "unhandled error");
    return sendResult(
      c,
      fail("INTERNAL", "The service failed unexpectedly; the request id identifies it in the logs."),
    );
  });

  // Every route, health and metrics included: what local mode keeps out must learn nothing of the service.
  if (options.apiKeys.size === 0) app.use(localModeOnly(corsOrigins));

  // One count of failed authentications per address, API keys' and the metrics token's alike.
  const authFailure = authFailureLimit();
  healthRoutes(app, options.readiness);
  docsRoutes(app, { localMode: options.apiKeys.size === 0 });
  consoleRoutes(app);
  if (metrics) metricsRoute(app, { metrics, token: options.metricsToken, authFailure });

  // Limits come before the body is read.
  app.use("/v1/*", principalMiddleware(options.apiKeys, authFailure));
  app.use("/v1/*", requestRateLimit(options.rateLimitRpm ?? DEFAULT_RATE_LIMIT_RPM));
  const inFlight = new BodiesInFlight();
  app.put(
    "/v1/workspaces/:workspaceId/documents",
    requestBody(Math.min(WORKSPACE_LIMITS.maxPushBytes, options.maxBodyBytes), inFlight),
  );
  app.use("/v1/*", requestBody(options.maxBodyBytes, inFlight));
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  executeRoute(app, { ...options, heartbeatMs });
  sessionRoutes(app, options.service, heartbeatMs);
  chatRoutes(app, { ...options, heartbeatMs });
  usageRoutes(app, options.service, options.clock ?? systemClock);
  if (options.description) serviceRoutes(app, options.description);
  if (options.knowledge) {
    workspaceRoutes(app, options.knowledge, options.readPush ?? (async (body) => readPushBody(body)));
  }
  app.notFound(routeNotFound(app.routes));
  return app;
}
