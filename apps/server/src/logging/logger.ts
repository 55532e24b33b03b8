export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}

/** One JSON object per line on stdout: what log shippers read without configuration. */
export function jsonLogger(write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  return {
    log(level, message, fields = {}) {
      write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
    },
  };
}

export const silentLogger: Logger = { log() {} };
