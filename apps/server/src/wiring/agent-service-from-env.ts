import {
  type AgentCatalog,
  AgentService,
  type ContextRetriever,
  type LlmProvider,
  type TurnObserver,
  type WebhookSubscription,
} from "@aptix/core";
import type { AptixStore } from "@aptix/store-drizzle";
import type { CatalogConfig } from "../config/catalog-config-schema.js";
import type { ServerEnv } from "../config/server-env.js";

export interface AgentServiceParts {
  catalog: AgentCatalog;
  providers: readonly LlmProvider[];
  retriever: ContextRetriever;
  store: AptixStore;
  files: CatalogConfig["files"];
  /** Prices over the built-in table (`APTIX_CONFIG` `prices`). */
  prices: CatalogConfig["prices"];
  /** Per-principal budgets (`APTIX_CONFIG` `budgets`) over the environment's. */
  budgets: CatalogConfig["budgets"];
  /** The base of FileRef urls: known only once the server listens (PORT=0 picks one). */
  publicUrl: () => string;
  /** Where turns are reported for traces and metrics. */
  observer: TurnObserver;
  /** Keys sessions' prompt-cache keys (see `cacheKeySecretFromEnv`). */
  cacheKeySecret: Uint8Array;
  /** The webhooks told of turns' ends, compactions and budget refusals (`APTIX_CONFIG` `webhooks`). */
  webhooks: readonly WebhookSubscription[];
}

const DAY_MS = 24 * 3_600_000;

/** Core's service over the adapters, with the limits the environment sets. */
export function agentServiceFromEnv(env: ServerEnv, parts: AgentServiceParts): AgentService {
  const {
    catalog,
    providers,
    retriever,
    store,
    files,
    prices,
    budgets,
    publicUrl,
    observer,
    cacheKeySecret,
    webhooks,
  } = parts;
  const defaults = {
    ...(env.APTIX_BUDGET_USD_MONTHLY === undefined ? {} : { usdMonthly: env.APTIX_BUDGET_USD_MONTHLY }),
    ...(env.APTIX_BUDGET_TOKENS_DAILY === undefined ? {} : { tokensDaily: env.APTIX_BUDGET_TOKENS_DAILY }),
  };
  return new AgentService({
    catalog,
    providers,
    retriever,
    store: store.sessions,
    files: store.files,
    events: store.events,
    maxLlmCallsPerRequest: env.APTIX_MAX_LLM_CALLS,
    toolTimeoutMs: env.APTIX_TOOL_TIMEOUT_MS,
    producedFiles: { publicUrl, ...files, quotaBytes: env.APTIX_QUOTA_FILE_BYTES },
    leaseMs: env.APTIX_LEASE_MS,
    observer,
    cacheKeySecret,
    ...(prices === undefined ? {} : { prices }),
    // A principal without a budget has nothing read before its turns, rounds and compactions.
    budgets: { defaults, principals: budgets ?? {} },
    maxRunningTurns: env.APTIX_MAX_RUNNING_TURNS,
    webhooks,
    eventRetentionMs: env.APTIX_EVENT_RETENTION_MS,
    traceRetentionMs: env.APTIX_TRACE_RETENTION_DAYS * DAY_MS,
    ...(env.APTIX_SESSION_RETENTION_DAYS === undefined
      ? {}
      : { sessionRetentionMs: env.APTIX_SESSION_RETENTION_DAYS * DAY_MS }),
  });
}
