import type { Logger } from "pino";
import { createLogger } from "../src/logging/create-logger.js";
import type { LogLevel } from "../src/logging/log-level.js";

/** The service's logger with its lines parsed into `lines` as they are written, at `level` (default `info`). */
export function capturedLog(level: LogLevel = "info"): {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
} {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level,
    destination: { write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, lines };
}
