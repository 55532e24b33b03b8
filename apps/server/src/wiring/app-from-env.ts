import { createAgentExecuteRequestValidator } from "@aptix/contracts";
import type { AgentService, WorkspaceKnowledge } from "@aptix/core";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Logger } from "pino";
import type { ServerEnv } from "../config/server-env.js";
import type { ReadinessMonitor } from "../health/readiness-monitor.js";
import type { AppEnv } from "../http/app-env.js";
import { createApp } from "../http/create-app.js";
import type { DocumentPreparationPool } from "../knowledge/document-preparation-pool.js";

/** The HTTP app over the service, with the auth, limits and heartbeat the environment sets. */
export function appFromEnv(
  env: ServerEnv,
  parts: {
    service: AgentService;
    knowledge: WorkspaceKnowledge;
    preparation: DocumentPreparationPool;
    readiness: ReadinessMonitor;
    logger: Logger;
  },
): OpenAPIHono<AppEnv> {
  const { service, knowledge, preparation, readiness, logger } = parts;
  return createApp({
    service,
    knowledge,
    readPush: (body) => preparation.readPushBody(body),
    validate: createAgentExecuteRequestValidator(),
    apiKeys: env.apiKeys,
    corsOrigins: env.APTIX_CORS_ORIGINS,
    maxBodyBytes: env.APTIX_MAX_BODY_BYTES,
    rateLimitRpm: env.APTIX_RATE_LIMIT_RPM,
    heartbeatMs: env.APTIX_SSE_HEARTBEAT_MS,
    readiness: async () => readiness.status(),
    logger,
  });
}
