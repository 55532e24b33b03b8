import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAgentExecuteRequestValidator } from "@aptix/contracts";
import {
  AgentService,
  type LlmProvider,
  randomIdGenerator,
  sha256ContentHashService,
  WorkspaceKnowledge,
} from "@aptix/core";
import { AnthropicMessagesProvider } from "@aptix/llm-anthropic";
import { OpenAIEmbedder, OpenAIResponsesProvider } from "@aptix/llm-openai";
import { openStore } from "@aptix/store-drizzle";
import { serve } from "@hono/node-server";
import { loadCatalog } from "./config/load-catalog.js";
import type { ServerEnv } from "./config/server-env.js";
import { ReadinessMonitor } from "./health/readiness-monitor.js";
import { createApp } from "./http/create-app.js";
import { DocumentPreparationPool } from "./knowledge/document-preparation-pool.js";
import type { Logger } from "./logging/logger.js";
import { ConfiguredServerTools } from "./tools/configured-server-tools.js";

export interface RunningServer {
  /** e.g. `http://127.0.0.1:8787` */
  url: string;
  port: number;
  /** Stops taking requests, lets running turns finish (up to the shutdown timeout), then closes the store. */
  close(): Promise<void>;
}

/**
 * How often the housekeeping runs: it fails turns whose instance stopped as soon as their lease has expired
 * (their client may still send the round again and have it run again), prunes old stream events and deletes
 * expired files. A turn left running is failed within a quarter lease of its expiry, a minute at most.
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
  // Server tools connect while the catalog loads: the catalog checks the modes against their names.
  let serverTools: ConfiguredServerTools | undefined;
  const { catalog, source, config } = await loadCatalog(
    env.APTIX_CONFIG,
    llmProviders.map((provider) => provider.id),
    async (checked) => {
      serverTools = await ConfiguredServerTools.connect(checked, {
        toolTimeoutMs: env.APTIX_TOOL_TIMEOUT_MS,
        logger,
        // The index opens with the store, below; the tool searches only once turns run.
        knowledge: { search: (input) => knowledge.search(input) },
      });
      return serverTools.tools;
    },
  ).catch(async (error: unknown) => {
    await serverTools?.close();
    throw error;
  });
  const tools = serverTools as ConfiguredServerTools;
  // Known once listening (PORT=0 picks one): FileRef urls are made as files are kept, long after.
  let publicUrl = env.APTIX_PUBLIC_URL ?? "";
  const store = await openStore(env.DATABASE_URL, {
    ...(env.APTIX_DATABASE_SCHEMA ? { schema: env.APTIX_DATABASE_SCHEMA } : {}),
    ...(env.APTIX_PGLITE_SHARED_BUFFERS
      ? { pgliteSettings: { shared_buffers: env.APTIX_PGLITE_SHARED_BUFFERS } }
      : {}),
    // Embeddings need pgvector: opening stops start-up, naming the extension, when Postgres lacks it.
    vectors: config.embeddings !== undefined,
  }).catch(async (error: unknown) => {
    // Stdio MCP servers are child processes: a start-up that stops must not leave them running.
    await tools.close();
    throw error;
  });
  const { embeddings } = config;
  // Pushes are read and cut in worker threads: megabytes of parsing, chunking and terms would hold the event
  // loop for seconds.
  const preparation = new DocumentPreparationPool();
  const knowledge = new WorkspaceKnowledge({
    index: store.workspaceIndex,
    hashes: sha256ContentHashService,
    preparation,
    ids: randomIdGenerator,
    quotaBytes: env.APTIX_QUOTA_WORKSPACE_BYTES,
    ...(embeddings
      ? {
          embeddings: {
            embedder: new OpenAIEmbedder({
              maxRetries: env.APTIX_OPENAI_MAX_RETRIES,
              timeoutMs: env.APTIX_OPENAI_TIMEOUT_MS,
            }),
            model: embeddings.model,
            ...(embeddings.batchSize ? { batchSize: embeddings.batchSize } : {}),
          },
        }
      : {}),
  });
  const service = new AgentService({
    catalog,
    providers: llmProviders,
    retriever: knowledge,
    store: store.sessions,
    files: store.files,
    events: store.events,
    maxLlmCallsPerRequest: env.APTIX_MAX_LLM_CALLS,
    toolTimeoutMs: env.APTIX_TOOL_TIMEOUT_MS,
    producedFiles: { publicUrl: () => publicUrl, ...config.files, quotaBytes: env.APTIX_QUOTA_FILE_BYTES },
    leaseMs: env.APTIX_LEASE_MS,
    maxRunningTurns: env.APTIX_MAX_RUNNING_TURNS,
    eventRetentionMs: env.APTIX_EVENT_RETENTION_MS,
  });
  // Before listening: the first `/readyz` already answers from a check (ready once the database is migrated).
  const readiness = await ReadinessMonitor.start({ database: () => store.readiness(), mcp: tools }, logger);
  const app = createApp({
    service,
    knowledge,
    readPush: (body) => preparation.readPushBody(body),
    validate: createAgentExecuteRequestValidator(),
    apiKeys: env.apiKeys,
    maxBodyBytes: env.APTIX_MAX_BODY_BYTES,
    rateLimitRpm: env.APTIX_RATE_LIMIT_RPM,
    heartbeatMs: env.APTIX_SSE_HEARTBEAT_MS,
    readiness: async () => readiness.status(),
    logger,
  });

  const server = await new Promise<Server>((resolve) => {
    const listening = serve({ fetch: app.fetch, port: env.PORT, hostname: env.HOST }, () =>
      resolve(listening as Server),
    );
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${env.HOST.includes(":") ? `[${env.HOST}]` : env.HOST}:${port}`;
  publicUrl = env.APTIX_PUBLIC_URL ?? url;

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
    await service.sweepExpiredFiles().then(
      (count) => count > 0 && logger.log("info", "deleted expired files", { count }),
      (error: unknown) => logger.log("error", "file retention sweep failed", { error: String(error) }),
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
      await readiness.stop();
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
      await preparation.close();
      await tools.close();
      await store.close();
      logger.log("info", "stopped");
    },
  };
}

function describeDatabase(url: string): string {
  if (/^postgres(ql)?:\/\//.test(url)) return url.replace(/\/\/([^@/]*)@/, "//***@");
  return url === "memory://" ? "embedded PGlite in memory" : `embedded PGlite at ${url}`;
}
