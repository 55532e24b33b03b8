import { createAgentExecuteRequestValidator } from "@aptix/contracts";
import type { AgentService, WorkspaceKnowledge } from "@aptix/core";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Logger } from "pino";
import type { ServerEnv } from "../config/server-env.js";
import { DEMO_NOTICE } from "../demo/demo-notice.js";
import type { ReadinessMonitor } from "../health/readiness-monitor.js";
import type { AppEnv } from "../http/app-env.js";
import { createApp } from "../http/create-app.js";
import type { ServiceDescription } from "../http/routes/service-routes.js";
import type { DocumentPreparationPool } from "../knowledge/document-preparation-pool.js";
import type { Telemetry } from "../telemetry/start-telemetry.js";

/** The HTTP app over the service, with the auth, limits and heartbeat the environment sets. */
export function appFromEnv(
  env: ServerEnv,
  parts: {
    service: AgentService;
    knowledge: WorkspaceKnowledge;
    preparation: DocumentPreparationPool;
    readiness: ReadinessMonitor;
    logger: Logger;
    telemetry: Pick<Telemetry, "metrics" | "tracer">;
    description: ServiceDescription;
  },
): OpenAPIHono<AppEnv> {
  const { service, knowledge, preparation, readiness, logger, telemetry, description } = parts;
  return createApp({
    service,
    knowledge,
    readPush: (body) => preparation.readPushBody(body),
    validate: createAgentExecuteRequestValidator(),
    apiKeys: env.apiKeys,
    corsOrigins: env.APTIX_CORS_ORIGINS,
    trustedProxies: env.APTIX_TRUSTED_PROXIES,
    maxBodyBytes: env.APTIX_MAX_BODY_BYTES,
    rateLimitRpm: env.APTIX_RATE_LIMIT_RPM,
    heartbeatMs: env.APTIX_SSE_HEARTBEAT_MS,
    readiness: async () => readiness.status(),
    notices: env.demo ? [DEMO_NOTICE] : [],
    logger,
    description,
    metrics: telemetry.metrics,
    ...(env.APTIX_METRICS_TOKEN === undefined ? {} : { metricsToken: env.APTIX_METRICS_TOKEN }),
    ...(telemetry.tracer ? { tracer: telemetry.tracer } : {}),
  });
}
