/**
 * `pnpm lint:openapi`: generates /openapi.json from the app, in this process (no network server), and lints it
 * with Redocly's recommended rules (redocly.yaml). Exits with Redocly's status: non-zero on any error.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentExecuteRequestValidator } from "@aptix/contracts";
import {
  AgentCatalog,
  AgentService,
  randomIdGenerator,
  sha256ContentHashService,
  WorkspaceKnowledge,
} from "@aptix/core";
import { InMemoryFileStore, InMemoryWorkspaceIndex, inMemorySessionStores } from "@aptix/core/testing";
import { DEFAULT_CATALOG } from "../src/config/default-catalog.js";
import { readServerEnv } from "../src/config/server-env.js";
import { createApp } from "../src/http/create-app.js";
import { silentLogger } from "../src/logging/silent-logger.js";
import { ServiceMetrics } from "../src/telemetry/service-metrics.js";
import { serviceDescriptionFromEnv } from "../src/wiring/service-description-from-env.js";

const catalog = AgentCatalog.create(DEFAULT_CATALOG);
if (!catalog.successful) throw new Error(`the default catalog is invalid: ${catalog.errors[0].message}`);
// The document depends on the routes only: no request reaches these in-memory parts.
const service = new AgentService({
  catalog: catalog.result,
  providers: [],
  store: inMemorySessionStores(),
  files: new InMemoryFileStore(),
});
const app = createApp({
  service,
  knowledge: new WorkspaceKnowledge({
    index: new InMemoryWorkspaceIndex(),
    hashes: sha256ContentHashService,
    ids: randomIdGenerator,
  }),
  validate: createAgentExecuteRequestValidator(),
  apiKeys: new Map(),
  maxBodyBytes: 32 * 1024 * 1024,
  readiness: async () => ({ ready: true }),
  logger: silentLogger,
  // The server always serves /metrics; the document describes it.
  metrics: new ServiceMetrics({ dbPoolInUse: () => 0 }),
  description: serviceDescriptionFromEnv(readServerEnv({}), {
    catalog: catalog.result,
    service,
    providers: [],
  }),
});
const response = await app.request("/openapi.json");
if (response.status !== 200) throw new Error(`/openapi.json answered ${response.status}`);

const directory = await mkdtemp(join(tmpdir(), "aptix-openapi-"));
try {
  const file = join(directory, "openapi.json");
  await writeFile(file, await response.text());
  const server = join(import.meta.dirname, "..");
  const redocly = join(server, "node_modules", ".bin", "redocly");
  const lint = spawnSync(redocly, ["lint", file, "--config", join(server, "redocly.yaml")], {
    stdio: "inherit",
    // No usage report and no update check: the lint runs offline, in CI too.
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
  });
  if (lint.error) throw lint.error;
  process.exitCode = lint.status ?? 1;
} finally {
  await rm(directory, { recursive: true, force: true });
}
