import type { CatalogConfig } from "../config/catalog-config-schema.js";
import type { ServerEnv } from "../config/server-env.js";
import { type ConfiguredWebhook, configuredWebhooks } from "../webhooks/configured-webhooks.js";

/**
 * The webhooks of APTIX_CONFIG with their secrets, checked before the store opens. A start-up that stops here
 * closes the server tools connected so far (stdio MCP servers are child processes).
 */
export async function webhooksFromConfig(
  config: CatalogConfig,
  env: ServerEnv,
  tools: { close(): Promise<void> },
): Promise<ConfiguredWebhook[]> {
  return configuredWebhooks(config.webhooks, env).catch(async (error: unknown) => {
    await tools.close();
    throw error;
  });
}
