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
export function connectionFailure(error: unknown, depth = 0): Error | undefined {
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

/** How many store calls are waiting on the database now, across every part of one store. */
export interface CallsInFlight {
  count: number;
}

/**
 * `store` with every method's failure to reach the database thrown as core's StoreUnavailableError, so the
 * service answers NOT_READY (503, retryable) rather than INTERNAL; once `isClosed()`, any failure is. Other
 * errors pass unchanged. Each asynchronous call is counted in `inFlight` until it settles. Each method is wrapped
 * once, here, so a call costs one extra function call.
 */
export function reportingUnavailability<T extends object>(
  store: T,
  isClosed: () => boolean,
  inFlight: CallsInFlight = { count: 0 },
): T {
  const translate = (error: unknown): unknown => {
    if (error instanceof StoreUnavailableError) return error;
    if (isClosed()) return new StoreUnavailableError("The store is closed.", { cause: error });
    const failure = connectionFailure(error);
    return failure
      ? new StoreUnavailableError(`The database cannot be reached: ${failure.message}`, { cause: error })
      : error;
  };
  const rethrow = (error: unknown): never => {
    throw translate(error);
  };
  // Reads anything else through to the store itself.
  const reporting = Object.create(store) as T;
  for (const name of methodNames(store)) {
    const method = Reflect.get(store, name) as (...args: unknown[]) => unknown;
    const wrapped = (...args: unknown[]): unknown => {
      let result: unknown;
      try {
        result = method.apply(store, args);
      } catch (error) {
        rethrow(error);
      }
      if (!(result instanceof Promise)) return result;
      inFlight.count++;
      return result.then(
        (value: unknown) => {
          inFlight.count--;
          return value;
        },
        (error: unknown) => {
          inFlight.count--;
          return rethrow(error);
        },
      );
    };
    Object.defineProperty(reporting, name, { value: wrapped, writable: true, configurable: true });
  }
  return reporting;
}

/** The methods `object` has, own or inherited (up to, not including, `Object.prototype`). */
function methodNames(object: object): Set<string> {
  const names = new Set<string>();
  for (
    let level = object;
    level !== Object.prototype && level !== null;
    level = Object.getPrototypeOf(level)
  ) {
    for (const name of Object.getOwnPropertyNames(level)) {
      if (name !== "constructor" && typeof Reflect.get(object, name) === "function") names.add(name);
    }
  }
  return names;
}

/** The driver's own message: drizzle wraps driver errors in a "Failed query" error whose `cause` says why. */
export function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? messageOf(error.cause) : error.message;
}
