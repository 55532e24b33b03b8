import type { Logger } from "pino";
import { createLogger } from "./create-logger.js";
import type { LogLevel } from "./log-level.js";

/**
 * The logger of `main`: JSON lines on stdout, pretty-printed (pino-pretty) when stdout is a terminal, i.e. a
 * person reads it. pino-pretty is loaded only then: a deployment's process never pays for it.
 */
export async function stdoutLogger(level: LogLevel): Promise<Logger> {
  if (!process.stdout.isTTY) return createLogger({ level });
  const { default: pretty } = await import("pino-pretty");
  return createLogger({
    level,
    destination: pretty({
      messageKey: "message",
      translateTime: "SYS:HH:MM:ss.l",
      // A terminal shows lines as they come; a person is reading, not a shipper.
      sync: true,
    }),
  });
}
