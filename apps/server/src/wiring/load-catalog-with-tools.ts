import type { AgentCatalog, LlmProvider } from "@aptix/core";
import type { Logger } from "pino";
import type { CatalogConfig } from "../config/catalog-config-schema.js";
import { loadCatalog } from "../config/load-catalog.js";
import type { ServerEnv } from "../config/server-env.js";
import { DEMO_CATALOG } from "../demo/demo-catalog.js";
import {
  ConfiguredServerTools,
  type ConfiguredServerToolsOptions,
} from "../tools/configured-server-tools.js";

/**
 * The catalog of APTIX_CONFIG and the server tools it declares, connected while it loads: the catalog checks the
 * modes against their names. A catalog that stops start-up closes the tools connected so far.
 */
export async function loadCatalogWithTools(
  env: ServerEnv,
  providers: readonly LlmProvider[],
  logger: Logger,
  knowledge: ConfiguredServerToolsOptions["knowledge"],
): Promise<{ catalog: AgentCatalog; source: string; config: CatalogConfig; tools: ConfiguredServerTools }> {
  let serverTools: ConfiguredServerTools | undefined;
  const loaded = await loadCatalog(
    env.APTIX_CONFIG,
    providers.map((provider) => provider.id),
    async (checked) => {
      serverTools = await ConfiguredServerTools.connect(checked, {
        toolTimeoutMs: env.APTIX_TOOL_TIMEOUT_MS,
        connectTimeoutMs: env.APTIX_MCP_CONNECT_TIMEOUT_MS,
        logger,
        knowledge,
      });
      return serverTools.tools;
    },
    { model: env.APTIX_MODEL, provider: env.APTIX_PROVIDER },
    env.demo ? { config: DEMO_CATALOG, name: "built-in demo config" } : undefined,
  ).catch(async (error: unknown) => {
    await serverTools?.close();
    throw error;
  });
  return { ...loaded, tools: serverTools as ConfiguredServerTools };
}
