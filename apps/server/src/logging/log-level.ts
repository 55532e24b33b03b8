/** The values `LOG_LEVEL` takes: pino's levels, most verbose first, and `silent`. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];
