import { boundedLogLine } from "./bounded-line.js";

type LogLevel = "debug" | "info" | "warn" | "error";

export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}

/** One JSON object per line on stdout, of at most 8 KiB: what log shippers read without configuration. */
export function jsonLogger(
  write: (line: string) => void = batchedLines((text) => process.stdout.write(text)),
): Logger {
  return {
    log(level, message, fields = {}) {
      write(`${boundedLogLine({ time: new Date().toISOString(), level, message, ...fields })}\n`);
    },
  };
}

export const silentLogger: Logger = { log() {} };

/**
 * Hands `write` the lines of one event-loop turn at once: a busy server answers several requests a turn, and each
 * write to a pipe is a system call and a wake-up of the log reader. No line waits past the turn it was logged in,
 * and lines still pending when the process exits are written then. (pino's sonic-boom also coalesces writes, but
 * holds lines until a minimum length has built up, which delays a quiet server's lines.)
 */
export function batchedLines(write: (text: string) => void): (line: string) => void {
  let pending = "";
  const flush = () => {
    if (pending === "") return;
    const text = pending;
    pending = "";
    write(text);
  };
  process.on("exit", flush);
  return (line) => {
    if (pending === "") setImmediate(flush);
    pending += line;
  };
}
