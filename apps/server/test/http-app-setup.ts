import { createAgentExecuteRequestValidator, type RequestLimits } from "@aptix/contracts";
import {
  AgentCatalog,
  AgentService,
  type FileStore,
  randomIdGenerator,
  type SessionStores,
  sha256ContentHashService,
  type TurnEventLog,
  WorkspaceKnowledge,
} from "@aptix/core";
import {
  type AgentServiceOptions,
  type BudgetsOptions,
  InMemoryFileStore,
  InMemoryWorkspaceIndex,
  inMemorySessionStores,
  type ManualClock,
  ScriptedLlmProvider,
} from "@aptix/core/testing";
import type { Logger } from "pino";
import { DEFAULT_CATALOG } from "../src/config/default-catalog.js";
import { readServerEnv } from "../src/config/server-env.js";
import { createApp } from "../src/http/create-app.js";
import { silentLogger } from "../src/logging/silent-logger.js";
import { ServiceMetrics } from "../src/telemetry/service-metrics.js";
import { serviceDescriptionFromEnv } from "../src/wiring/service-description-from-env.js";

/** The app of the HTTP tests: the default catalog on a scripted provider, in-memory stores, alice's and bob's keys. */
const KEYS = new Map([
  ["alice-key-0123456789", "alice"],
  ["bob-key-0123456789ab", "bob"],
]);

export interface SetupOptions<P extends ScriptedLlmProvider> {
  apiKeys?: Map<string, string>;
  /** `APTIX_CORS_ORIGINS`: none when absent. */
  corsOrigins?: readonly string[];
  maxBodyBytes?: number;
  /** `APTIX_RATE_LIMIT_RPM`: the app's default when absent. */
  rateLimitRpm?: number;
  ready?: boolean;
  logger?: Logger;
  /** The scripted provider the default catalog's contexts call (its id must be `scripted`). */
  provider?: P;
  /** In memory when absent; a test of what Postgres can keep passes a real store's. */
  store?: SessionStores;
  files?: FileStore;
  events?: TurnEventLog;
  /** The request limits the app validates with, over a 1,000-character instruction limit. */
  limits?: Partial<RequestLimits>;
  /** Short polls and flushes make the streaming tests quick. */
  service?: Pick<AgentServiceOptions, "followPollMs" | "eventFlushMs" | "prices" | "observer">;
  /** The budgets new user turns are admitted under; none when absent. */
  budgets?: BudgetsOptions;
  /** The model of the default catalog's contexts; the catalog's when absent. */
  model?: string;
  /** The service's, the in-memory store's and the budgets' clock; the system's when absent. */
  clock?: ManualClock;
}

export function setup<P extends ScriptedLlmProvider = ScriptedLlmProvider>(options: SetupOptions<P> = {}) {
  const created = AgentCatalog.create({
    ...DEFAULT_CATALOG,
    conversationContexts: DEFAULT_CATALOG.conversationContexts.map((context) => ({
      ...context,
      provider: "scripted",
      ...(options.model ? { model: options.model } : {}),
    })),
  });
  if (!created.successful) throw new Error("catalog");
  const provider = options.provider ?? (new ScriptedLlmProvider({ id: "scripted" }) as P);
  const knowledge = new WorkspaceKnowledge({
    index: new InMemoryWorkspaceIndex(),
    hashes: sha256ContentHashService,
    ids: randomIdGenerator,
  });
  const service = new AgentService({
    retriever: knowledge,
    catalog: created.result,
    providers: [provider],
    store: options.store ?? inMemorySessionStores(options.clock),
    files: options.files ?? new InMemoryFileStore(),
    ...(options.events ? { events: options.events } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.budgets ? { budgets: options.budgets } : {}),
    ...options.service,
  });
  const app = createApp({
    service,
    knowledge,
    validate: createAgentExecuteRequestValidator({ maxInstructionChars: 1_000, ...options.limits }),
    apiKeys: options.apiKeys ?? KEYS,
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    ...(options.rateLimitRpm === undefined ? {} : { rateLimitRpm: options.rateLimitRpm }),
    maxBodyBytes: options.maxBodyBytes ?? 64 * 1024,
    readiness: async () =>
      options.ready === false ? { ready: false, reason: "database unreachable" } : { ready: true },
    logger: options.logger ?? silentLogger,
    metrics: new ServiceMetrics({ dbPoolInUse: () => 0 }),
    ...(options.clock ? { clock: options.clock } : {}),
    description: serviceDescriptionFromEnv(readServerEnv({}), {
      catalog: created.result,
      service,
      providers: [provider],
    }),
  });
  const post = (body: unknown, key = "alice-key-0123456789", headers: Record<string, string> = {}) =>
    app.request("/v1/agent/execute", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const get = (path: string, key = "alice-key-0123456789") =>
    app.request(path, { headers: { authorization: `Bearer ${key}` } });
  /** Sends a JSON body to any route as alice (or `key`). */
  const send = (method: string, path: string, body: unknown, key = "alice-key-0123456789") =>
    app.request(path, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  return { app, service, knowledge, provider, post, get, send };
}
