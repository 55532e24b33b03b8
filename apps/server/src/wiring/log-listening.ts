import type { Logger } from "pino";
import type { ServerEnv } from "../config/server-env.js";
import { DEMO_NOTICE } from "../demo/demo-notice.js";
import { describeDatabase } from "./describe-database.js";

/**
 * The start-up line: where the server listens, on which database and config, with which auth and providers, and
 * the default conversation context's model (where APTIX_MODEL shows it took effect).
 */
export function logListening(
  logger: Logger,
  env: ServerEnv,
  listening: {
    url: string;
    config: string;
    providers: readonly { id: string }[];
    defaultContext: { id: string; model: string; provider: string } | undefined;
  },
): void {
  const context = listening.defaultContext;
  logger.info(
    {
      ...(env.demo ? { demo: DEMO_NOTICE.message } : {}),
      url: listening.url,
      // Where a person starts: the browsable API reference.
      docs: `${listening.url}/docs`,
      database: describeDatabase(env.DATABASE_URL),
      config: listening.config,
      auth:
        env.apiKeys.size > 0
          ? `${env.apiKeys.size} API key(s)`
          : "local mode: one principal, loopback callers only",
      providers: listening.providers.map((provider) => provider.id),
      // Picked: the context's boot prompt is no part of a log line.
      ...(context
        ? { defaultContext: { id: context.id, model: context.model, provider: context.provider } }
        : {}),
    },
    "listening",
  );
}
