import { StoreUnavailableError } from "@aptix/core";

/**
 * Error codes that say the database cannot be reached: Node's socket errors, and postgres.js's own for a
 * connection that timed out, dropped or was ended (`sql.end()`).
 */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
]);

/**
 * SQLSTATEs of a server that is going away or turns connections down: class 08 (connection exception),
 * 57P01-57P03 (administrator or crash shutdown, e.g. `pg_terminate_backend`; cannot connect now) and 53300
 * (too many connections).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith("08") || ["57P01", "57P02", "57P03", "53300"].includes(code);
}

/**
 * The driver error behind `error` that says the database cannot be reached, if any: drizzle wraps driver errors
 * in its own (`cause`), and a connection tried on several addresses fails with an AggregateError.
 */
function connectionFailure(error: unknown, depth = 0): Error | undefined {
  if (!(error instanceof Error) || depth > 8) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (CONNECTION_CODES.has(code) || isUnavailableSqlState(code))) return error;
  const nested = error instanceof AggregateError ? [...error.errors, error.cause] : [error.cause];
  for (const inner of nested) {
    const found = connectionFailure(inner, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * `store` with every method's failure to reach the database thrown as core's StoreUnavailableError, so the
 * service answers NOT_READY (503, retryable) rather than INTERNAL; once `isClosed()`, any failure is. Other
 * errors pass unchanged.
 */
export function reportingUnavailability<T extends object>(store: T, isClosed: () => boolean): T {
  const translate = (error: unknown): unknown => {
    if (error instanceof StoreUnavailableError) return error;
    if (isClosed()) return new StoreUnavailableError("The store is closed.", { cause: error });
    const failure = connectionFailure(error);
    return failure
      ? new StoreUnavailableError(`The database cannot be reached: ${failure.message}`, { cause: error })
      : error;
  };
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        let result: unknown;
        try {
          result = value.apply(target, args);
        } catch (error) {
          throw translate(error);
        }
        return result instanceof Promise
          ? result.catch((error: unknown) => {
              throw translate(error);
            })
          : result;
      };
    },
  });
}
