import type { ServerEnv } from "../config/server-env.js";
import type { Logger } from "../logging/logger.js";

/** The start-up line: where the server listens, on which database and config, with which auth and providers. */
export function logListening(
  logger: Logger,
  env: ServerEnv,
  listening: { url: string; config: string; providers: readonly { id: string }[] },
): void {
  logger.log("info", "listening", {
    url: listening.url,
    database: describeDatabase(env.DATABASE_URL),
    config: listening.config,
    auth:
      env.apiKeys.size > 0
        ? `${env.apiKeys.size} API key(s)`
        : "local mode: one principal, loopback callers only",
    providers: listening.providers.map((provider) => provider.id),
  });
}

function describeDatabase(url: string): string {
  if (/^postgres(ql)?:\/\//.test(url)) return url.replace(/\/\/([^@/]*)@/, "//***@");
  return url === "memory://" ? "embedded PGlite in memory" : `embedded PGlite at ${url}`;
}
