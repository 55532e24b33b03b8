import { type LlmProvider, PriceList } from "@aptix/core";
import type { AptixStore } from "@aptix/store-drizzle";
import type { Logger } from "pino";
import type { ServerEnv } from "./config/server-env.js";
import { ReadinessMonitor } from "./health/readiness-monitor.js";
import { DocumentPreparationPool } from "./knowledge/document-preparation-pool.js";
import { loggingFaults } from "./telemetry/logging-faults.js";
import { startTelemetry } from "./telemetry/start-telemetry.js";
import { agentServiceFromEnv } from "./wiring/agent-service-from-env.js";
import { appFromEnv } from "./wiring/app-from-env.js";
import { cacheKeySecretFromEnv } from "./wiring/cache-key-secret-from-env.js";
import { checkPort } from "./wiring/check-port.js";
import { listen } from "./wiring/listen.js";
import { loadCatalogWithTools } from "./wiring/load-catalog-with-tools.js";
import { logListening } from "./wiring/log-listening.js";
import { openStoreFromEnv } from "./wiring/open-store-from-env.js";
import { providersFromEnv } from "./wiring/providers-from-env.js";
import { serviceDescriptionFromEnv } from "./wiring/service-description-from-env.js";
import { startHousekeeping } from "./wiring/start-housekeeping.js";
import { startWebhookDeliveries } from "./wiring/start-webhook-deliveries.js";
import { warnShortApiKeys } from "./wiring/warn-short-api-keys.js";
import { warnUnsetProviderKeys } from "./wiring/warn-unset-provider-keys.js";
import { webhooksFromConfig } from "./wiring/webhooks-from-config.js";
import { workspaceKnowledgeFromEnv } from "./wiring/workspace-knowledge-from-env.js";

export interface RunningServer {
  /** e.g. `http://127.0.0.1:8787` */
  url: string;
  port: number;
  /** Stops taking requests, lets running turns finish (up to the shutdown timeout), then closes the store. */
  close(): Promise<void>;
}

/** Wires the adapters into core and listens (docs/architecture.md: the server owns wiring, core owns behaviour). */
export async function startServer(
  env: ServerEnv,
  logger: Logger,
  providers?: readonly LlmProvider[],
): Promise<RunningServer> {
  await checkPort(env);
  const llmProviders = providers ?? providersFromEnv(env);
  const { catalog, source, config, tools } = await loadCatalogWithTools(env, llmProviders, logger, {
    // The index opens with the store, below; the tool searches only once turns run.
    search: (input) => knowledge.search(input),
  });
  const webhooks = await webhooksFromConfig(config, env, tools);
  const { store, cacheKeySecret } = await openStoreWithSecret(env, tools, {
    vectors: config.embeddings !== undefined,
    logger,
  });
  // Pushes are read and cut in worker threads: megabytes of parsing, chunking and terms would hold the event
  // loop for seconds.
  const preparation = new DocumentPreparationPool();
  const knowledge = workspaceKnowledgeFromEnv(env, store, preparation, config.embeddings);
  const telemetry = startTelemetry(env, {
    dbPoolInUse: () => store.poolInUse(),
    prices: new PriceList(config.prices),
    warn: (message) => logger.warn(message),
  });
  // Known once listening (PORT=0 picks one): FileRef urls are made as files are kept, long after.
  let publicUrl = env.APTIX_PUBLIC_URL ?? "";
  const service = agentServiceFromEnv(env, {
    catalog,
    providers: llmProviders,
    retriever: knowledge,
    store,
    files: config.files,
    prices: config.prices,
    budgets: config.budgets,
    publicUrl: () => publicUrl,
    observer: loggingFaults(telemetry.observer, logger),
    cacheKeySecret,
    webhooks: webhooks.map(({ key: _key, ...subscription }) => subscription),
  });
  // Before listening: the first `/readyz` already answers from a check (ready once the database is migrated).
  const readiness = await ReadinessMonitor.start(
    { database: () => store.readiness(), mcp: tools, listener: () => store.listenerHeard() },
    logger,
  );
  const app = appFromEnv(env, {
    service,
    knowledge,
    preparation,
    readiness,
    logger,
    telemetry,
    description: serviceDescriptionFromEnv(env, { catalog, service, providers: llmProviders }),
  });
  const listening = await listen(app.fetch, env).catch(async (error: unknown) => {
    // The port was taken since checkPort: what started must not outlive the start-up that stops.
    await readiness.stop();
    await Promise.all([preparation.close(), tools.close(), store.close(), telemetry.shutdown()]);
    throw error;
  });
  publicUrl = env.APTIX_PUBLIC_URL ?? listening.url;
  const housekeeping = startHousekeeping(service, logger, env.APTIX_LEASE_MS);
  const deliveries = startWebhookDeliveries(webhooks, { store, metrics: telemetry.metrics, logger });
  logListening(logger, env, {
    url: listening.url,
    config: source,
    providers: llmProviders,
    defaultContext: config.conversationContexts[0],
  });
  // Given providers are the caller's: only the built-in adapters read their keys from the environment.
  if (!providers) warnUnsetProviderKeys(logger, catalog);
  warnShortApiKeys(logger, env.apiKeys);

  return {
    url: listening.url,
    port: listening.port,
    close: () =>
      stopInOrder(
        { readiness, housekeeping, listening, deliveries, preparation, tools, store, telemetry },
        logger,
      ),
  };
}

/**
 * The store of DATABASE_URL and the prompt-cache key's secret it may hold. Stdio MCP servers are child processes:
 * a start-up that stops here must not leave them (nor the store) running.
 */
async function openStoreWithSecret(
  env: ServerEnv,
  tools: Closable,
  options: { vectors: boolean; logger: Logger },
): Promise<{ store: AptixStore; cacheKeySecret: Uint8Array }> {
  const store = await openStoreFromEnv(env, options).catch(async (error: unknown) => {
    await tools.close();
    throw error;
  });
  const cacheKeySecret = await cacheKeySecretFromEnv(env, store).catch(async (error: unknown) => {
    await Promise.all([tools.close(), store.close()]);
    throw error;
  });
  return { store, cacheKeySecret };
}

interface Closable {
  close(): Promise<void>;
}

/**
 * Not ready from the first step (`/readyz` fails), then stops taking requests and lets running turns finish, then
 * closes what they used, each part after the parts that use it.
 */
async function stopInOrder(
  parts: {
    readiness: { stop(): Promise<void> };
    housekeeping: { stop(): Promise<void> };
    listening: Closable;
    deliveries: { stop(): Promise<void> };
    preparation: Closable;
    tools: Closable;
    store: Closable;
    telemetry: { shutdown(): Promise<void> };
  },
  logger: Logger,
): Promise<void> {
  await parts.readiness.stop();
  await parts.housekeeping.stop();
  await parts.listening.close();
  // After the turns that finish as the server stops wrote their events; what is left waits in the outbox.
  await parts.deliveries.stop();
  await parts.preparation.close();
  await parts.tools.close();
  await parts.store.close();
  await parts.telemetry.shutdown();
  logger.info("stopped");
}
