import pino, { type Logger } from "pino";

/** A logger that writes nothing: for tests and embedders that log elsewhere. */
export const silentLogger: Logger = pino({ level: "silent" });
