import { createServer } from "node:net";
import type { ServerEnv } from "../config/server-env.js";

/**
 * Rejects, with the listen error, when HOST:PORT cannot be listened on (taken, not an address here), so start-up
 * says so at once instead of after seconds of opening the database. `listen` may still lose a race for it.
 */
export function checkPort(env: Pick<ServerEnv, "HOST" | "PORT">): Promise<void> {
  if (env.PORT === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen({ port: env.PORT, host: env.HOST, exclusive: true }, () => probe.close(() => resolve()));
  });
}
