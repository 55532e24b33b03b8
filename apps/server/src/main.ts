import { ConfigError } from "./config/config-error.js";
import { readServerEnv } from "./config/server-env.js";
import { jsonLogger } from "./logging/logger.js";
import { startServer } from "./start-server.js";

const logger = jsonLogger();

try {
  const server = await startServer(readServerEnv(process.env), logger);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log("info", "shutting down: letting running turns finish", { signal });
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.log("error", "shutdown failed", { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
} catch (error) {
  if (error instanceof ConfigError) {
    logger.log("error", error.message);
    process.exit(2);
  }
  throw error;
}
