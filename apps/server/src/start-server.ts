import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAgentExecuteRequestValidator } from "@aptix/contracts";
import { AgentService, type LlmProvider } from "@aptix/core";
import { AnthropicMessagesProvider } from "@aptix/llm-anthropic";
import { OpenAIResponsesProvider } from "@aptix/llm-openai";
import { openStore } from "@aptix/store-drizzle";
import { serve } from "@hono/node-server";
import { loadCatalog } from "./config/load-catalog.js";
import type { ServerEnv } from "./config/server-env.js";
import { createApp } from "./http/create-app.js";
import type { Logger } from "./logging/logger.js";

export interface RunningServer {
  /** e.g. `http://127.0.0.1:8787` */
  url: string;
  port: number;
  /** Stops taking requests, lets running turns finish (up to the shutdown timeout), then closes the store. */
  close(): Promise<void>;
}

/**
 * How often the housekeeping runs: it fails turns whose instance stopped as soon as their lease has expired
 * (their client may still send the round again and have it run again) and prunes old stream events. A turn
 * left running is failed within a quarter lease of its expiry, a minute at most.
 */
export function housekeepingIntervalMs(leaseMs: number): number {
  return Math.min(60_000, Math.max(100, Math.floor(leaseMs / 4)));
}

/** Wires the adapters into core and listens (docs/architecture.md: the server owns wiring, core owns behaviour). */
export async function startServer(
  env: ServerEnv,
  logger: Logger,
  providers?: readonly LlmProvider[],
): Promise<RunningServer> {
  // Each adapter's id is a provider name the catalog may use; the catalog is checked against them.
  const llmProviders = providers ?? [
    new OpenAIResponsesProvider({
      maxRetries: env.APTIX_OPENAI_MAX_RETRIES,
      timeoutMs: env.APTIX_OPENAI_TIMEOUT_MS,
    }),
    new AnthropicMessagesProvider({
      maxRetries: env.APTIX_ANTHROPIC_MAX_RETRIES,
      timeoutMs: env.APTIX_ANTHROPIC_TIMEOUT_MS,
    }),
  ];
  const { catalog, source } = await loadCatalog(
    env.APTIX_CONFIG,
    llmProviders.map((provider) => provider.id),
  );
  const store = await openStore(env.DATABASE_URL, {
    ...(env.APTIX_DATABASE_SCHEMA ? { schema: env.APTIX_DATABASE_SCHEMA } : {}),
    ...(env.APTIX_PGLITE_SHARED_BUFFERS
      ? { pgliteSettings: { shared_buffers: env.APTIX_PGLITE_SHARED_BUFFERS } }
      : {}),
  });
  const service = new AgentService({
    catalog,
    providers: llmProviders,
    store: store.sessions,
    files: store.files,
    events: store.events,
    maxLlmCallsPerRequest: env.APTIX_MAX_LLM_CALLS,
    leaseMs: env.APTIX_LEASE_MS,
    eventRetentionMs: env.APTIX_EVENT_RETENTION_MS,
  });
  let stopping = false;
  const app = createApp({
    service,
    validate: createAgentExecuteRequestValidator(),
    apiKeys: env.apiKeys,
    maxBodyBytes: env.APTIX_MAX_BODY_BYTES,
    heartbeatMs: env.APTIX_SSE_HEARTBEAT_MS,
    readiness: async () => (stopping ? { ready: false, reason: "shutting down" } : store.readiness()),
    logger,
  });

  const server = await new Promise<Server>((resolve) => {
    const listening = serve({ fetch: app.fetch, port: env.PORT, hostname: env.HOST }, () =>
      resolve(listening as Server),
    );
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${env.HOST.includes(":") ? `[${env.HOST}]` : env.HOST}:${port}`;

  // Turns left running by a stopped instance are failed soon after their lease expires, even if nobody asks;
  // stream events are pruned once their turn has been over for APTIX_EVENT_RETENTION_MS.
  const intervalMs = housekeepingIntervalMs(env.APTIX_LEASE_MS);
  const housekeep = async () => {
    await service.failExpiredTurns().then(
      (count) => count > 0 && logger.log("warn", "failed turns whose instance stopped", { count }),
      (error: unknown) => logger.log("error", "reaper failed", { error: String(error) }),
    );
    await service.pruneTurnEvents().then(
      (count) => count > 0 && logger.log("info", "pruned the stream events of ended turns", { count }),
      (error: unknown) => logger.log("error", "event pruning failed", { error: String(error) }),
    );
  };
  // One run at a time: a tick that finds the last run still going skips, so a slow database piles nothing up.
  let housekeeping: Promise<void> | undefined;
  const reaper = setInterval(() => {
    housekeeping ??= housekeep().finally(() => {
      housekeeping = undefined;
    });
  }, intervalMs);
  reaper.unref();

  logger.log("info", "listening", {
    url,
    database: describeDatabase(env.DATABASE_URL),
    config: source,
    auth:
      env.apiKeys.size > 0
        ? `${env.apiKeys.size} API key(s)`
        : "local mode: one principal, loopback callers only",
    providers: llmProviders.map((provider) => provider.id),
  });
  // Say at start-up which configured providers cannot be called yet, rather than at the first turn.
  const keyOf: Record<string, string> = { openai: "OPENAI_API_KEY", anthropic: "ANTHROPIC_API_KEY" };
  const used = new Set(catalog.conversationContexts.map((context) => context.provider));
  for (const provider of providers ? [] : [...used]) {
    const variable = keyOf[provider];
    if (variable && !process.env[variable]) {
      logger.log(
        "warn",
        `${variable} is not set: turns of ${provider} conversation contexts will fail with PROVIDER_ERROR until it is set.`,
      );
    }
  }

  return {
    url,
    port,
    async close() {
      stopping = true;
      clearInterval(reaper);
      await housekeeping;
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), env.APTIX_SHUTDOWN_TIMEOUT_MS);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
      await store.close();
      logger.log("info", "stopped");
    },
  };
}

function describeDatabase(url: string): string {
  if (/^postgres(ql)?:\/\//.test(url)) return url.replace(/\/\/([^@/]*)@/, "//***@");
  return url === "memory://" ? "embedded PGlite in memory" : `embedded PGlite at ${url}`;
}
