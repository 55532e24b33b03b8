import { ConfigError } from "./config-error.js";
import { loadCatalog } from "./load-catalog.js";

/**
 * What is wrong with APTIX_CONFIG's file (read and checked on its own: its keys, shapes and providers, no MCP
 * server started), as start-up lines: told beside a bad environment's, so one start names every problem.
 */
export async function configFileLines(env: NodeJS.ProcessEnv): Promise<string[]> {
  try {
    await loadCatalog(env.APTIX_CONFIG || undefined, undefined, undefined, {
      model: env.APTIX_MODEL || undefined,
      provider: env.APTIX_PROVIDER || undefined,
    });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.lines;
    throw error;
  }
}
