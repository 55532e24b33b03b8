import type { Logger } from "pino";
import type { ServerEnv } from "../config/server-env.js";
import { describeDatabase } from "./describe-database.js";

/** The start-up line: where the server listens, on which database and config, with which auth and providers. */
export function logListening(
  logger: Logger,
  env: ServerEnv,
  listening: { url: string; config: string; providers: readonly { id: string }[] },
): void {
  logger.info(
    {
      url: listening.url,
      database: describeDatabase(env.DATABASE_URL),
      config: listening.config,
      auth:
        env.apiKeys.size > 0
          ? `${env.apiKeys.size} API key(s)`
          : "local mode: one principal, loopback callers only",
      providers: listening.providers.map((provider) => provider.id),
    },
    "listening",
  );
}
