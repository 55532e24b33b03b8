import type { Logger } from "pino";
import sonicBoom from "sonic-boom";
import { createLogger } from "./create-logger.js";
import type { LogLevel } from "./log-level.js";

export interface StdoutLog {
  logger: Logger;
  /**
   * Ends the process with `code` once the lines logged so far are written, or after `withinMs` if stdout takes
   * none (a pipe nobody reads), or at once if they cannot be (the pipe's reader is gone).
   */
  exit(code: number, withinMs: number): void;
}

/**
 * The logger of `main`: JSON lines on stdout, pretty-printed (pino-pretty) when stdout is a terminal, i.e. a
 * person reads it. pino-pretty is loaded only then: a deployment's process never pays for it.
 */
export async function stdoutLogger(level: LogLevel): Promise<StdoutLog> {
  if (process.stdout.isTTY) {
    const { default: pretty } = await import("pino-pretty");
    const destination = pretty({
      messageKey: "message",
      translateTime: "SYS:HH:MM:ss.l",
      // A terminal shows lines as they come; a person is reading, not a shipper.
      sync: true,
    });
    return { logger: createLogger({ level, destination }), exit: (code) => process.exit(code) };
  }
  // Asynchronous writes that pino's own destination would flush synchronously at exit, retrying forever when the
  // pipe's reader is gone (`pnpm start | tee log` after Ctrl-C) or stalled: that held the process past every
  // signal. This one is flushed before exit, within a deadline, and never waited on at exit.
  const destination = new sonicBoom.SonicBoom({ fd: 1, sync: false });
  let broken = false;
  destination.on("error", () => {
    // EPIPE, mostly: nobody reads the lines any more; the process carries on without them.
    broken = true;
  });
  return {
    logger: createLogger({ level, destination }),
    exit(code, withinMs) {
      if (broken) process.exit(code);
      setTimeout(() => process.exit(code), withinMs);
      destination.flush(() => process.exit(code));
    },
  };
}
