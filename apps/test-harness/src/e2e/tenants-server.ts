import { type ServerProcess, spawnServer } from "./server-process.js";

/** Three principals' API keys, long enough to start without a warning. */
export const TENANT_KEYS = {
  alice: `alice-${"a".repeat(32)}`,
  bob: `bob-${"b".repeat(32)}`,
  carol: `carol-${"c".repeat(32)}`,
};
export type Tenant = keyof typeof TENANT_KEYS;

/**
 * The server as a child process serving `TENANT_KEYS`, on an in-memory database and its built-in config, with the
 * default request body limit (32 MiB): for the tests of its limits on what clients send.
 */
export function spawnTenantsServer(startTimeoutMs: number): Promise<ServerProcess> {
  return spawnServer({
    env: {
      DATABASE_URL: "memory://",
      APTIX_CONFIG: undefined,
      APTIX_MAX_BODY_BYTES: undefined,
      APTIX_API_KEYS: Object.entries(TENANT_KEYS)
        .map(([principal, key]) => `${principal}:${key}`)
        .join(","),
      OPENAI_API_KEY: "test",
    },
    startTimeoutMs,
  });
}
