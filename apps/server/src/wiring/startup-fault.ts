import type { ServerEnv } from "../config/server-env.js";
import { describeDatabase } from "./describe-database.js";

/** The error's own `code` and `syscall`, or its causes' (drivers and drizzle wrap what the socket said). */
function rootFault(error: unknown): { code?: string; syscall?: string } {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const { code, syscall, cause } = current as { code?: unknown; syscall?: unknown; cause?: unknown };
    if (typeof code === "string") {
      return { code, ...(typeof syscall === "string" ? { syscall } : {}) };
    }
    current = cause;
  }
  return {};
}

/**
 * The one line start-up prints for a fault of the machine or the database rather than of the service (the port is
 * taken, Postgres is down): its cause and what to do, without a stack. Undefined for anything else, a bug.
 */
export function startupFault(
  error: unknown,
  env: Pick<ServerEnv, "HOST" | "PORT" | "DATABASE_URL">,
): string | undefined {
  const { code, syscall } = rootFault(error);
  const database = describeDatabase(env.DATABASE_URL);
  const address = `${env.HOST}:${env.PORT}`;
  if (syscall === "listen" || syscall === "bind") {
    if (code === "EADDRINUSE")
      return `Port ${env.PORT} on ${env.HOST} is in use by another process: stop it, or set PORT to a free port (PORT=0 picks one).`;
    if (code === "EADDRNOTAVAIL")
      return `HOST=${env.HOST} is not an address of this machine: set HOST to one of its addresses (127.0.0.1 for this machine only).`;
    if (code === "EACCES")
      return `Listening on ${address} needs privileges this process lacks: set PORT to 1024 or above.`;
  }
  switch (code) {
    case "ECONNREFUSED":
      return `The database at ${database} refused the connection: start Postgres there, or fix DATABASE_URL (docs/configuration.md).`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `The database host of ${database} was not found: fix the host in DATABASE_URL.`;
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `The database at ${database} could not be reached: check the network, or fix DATABASE_URL.`;
    case "28P01":
    case "28000":
      return `The database at ${database} refused the user or password of DATABASE_URL: fix them.`;
    case "3D000":
      return `The database named in DATABASE_URL (${database}) does not exist: create it (createdb), or fix DATABASE_URL.`;
    case "EACCES":
    case "EROFS":
    case "EPERM":
      return `The embedded database at ${env.DATABASE_URL} cannot be written: fix the directory's permissions, or set DATABASE_URL to a writable directory.`;
    default:
      return undefined;
  }
}
