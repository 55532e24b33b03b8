import pino, { type Logger } from "pino";

/** A logger that writes nothing (and opens no stream): for tests and embedders that log elsewhere. */
export const silentLogger: Logger = pino({ level: "silent" }, { write() {} });
