import type { AptixStore } from "@aptix/store-drizzle";
import type { ServerEnv } from "../config/server-env.js";

/** The name the store keeps the prompt-cache key's secret under when the environment gives none. */
const CACHE_KEY_SECRET_NAME = "prompt-cache-key";

/**
 * The secret that keys sessions' prompt-cache keys: `APTIX_CACHE_KEY_SECRET`, else the one made once and kept in
 * the database, so every instance on it keys a session alike (and its calls land on one provider cache).
 */
export async function cacheKeySecretFromEnv(
  env: Pick<ServerEnv, "APTIX_CACHE_KEY_SECRET">,
  store: Pick<AptixStore, "deploymentSecret">,
): Promise<Uint8Array> {
  if (env.APTIX_CACHE_KEY_SECRET !== undefined) return new TextEncoder().encode(env.APTIX_CACHE_KEY_SECRET);
  return store.deploymentSecret(CACHE_KEY_SECRET_NAME);
}
