import pino, { type DestinationStream, type Logger } from "pino";
import { boundedLines } from "./bounded-line.js";
import type { LogLevel } from "./log-level.js";
import { REDACTED_PATHS } from "./redacted-paths.js";

interface CreateLoggerOptions {
  /** `LOG_LEVEL`; default `info`. */
  level?: LogLevel;
  /**
   * Where the JSON lines go. Default stdout through sonic-boom, asynchronous: a line goes out at once (no minimum
   * length is awaited), the lines logged while a write is in flight go together in the next, and what is pending
   * when the process exits is flushed then.
   */
  destination?: DestinationStream;
}

/**
 * The service's logger: pino, one JSON object per line of at most 8 KiB (what log shippers read without
 * configuration), `time` (ISO), `level` (its name) and `message` first, secrets replaced by `[redacted]`.
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? "info",
      messageKey: "message",
      // No pid and hostname: the process manager and the shipper know them.
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...REDACTED_PATHS], censor: "[redacted]" },
    },
    boundedLines(options.destination ?? pino.destination({ dest: 1, sync: false })),
  );
}
