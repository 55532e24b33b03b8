import type { Logger } from "pino";
import { ConfigError } from "./config/config-error.js";
import { readServerEnv, type ServerEnv } from "./config/server-env.js";
import { stdoutLogger } from "./logging/stdout-logger.js";
import { startServer } from "./start-server.js";

/** A configuration problem stops start-up with exit code 2, one line per bad key; anything else is a bug. */
function exitOnConfigError(logger: Logger, error: unknown): never {
  if (!(error instanceof ConfigError)) throw error;
  for (const line of error.lines) logger.error(line);
  process.exit(2);
}

let env: ServerEnv;
try {
  env = readServerEnv(process.env);
} catch (error) {
  // LOG_LEVEL may be among the bad variables: the problems are told at the default level.
  exitOnConfigError(await stdoutLogger("info"), error);
}
const logger = await stdoutLogger(env.LOG_LEVEL);

try {
  const server = await startServer(env, logger);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, "shutting down: letting running turns finish");
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ error: String(error) }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
} catch (error) {
  exitOnConfigError(logger, error);
}
