/**
 * What a store (a session store, FileStore, TurnEventLog) throws when its database cannot be reached: the
 * connection was refused, dropped or timed out, or the store is closed. A store adapter wraps its driver's
 * connection errors in it, so core and the server tell an outage (NOT_READY, retryable: the request may be sent
 * again once the database is back) from a bug (INTERNAL) without knowing any driver. `cause` is the driver's
 * error.
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Whether `error` is a StoreUnavailableError, told by its name as well: a store built against another copy of
 * this package throws another copy's class.
 */
export function isStoreUnavailable(error: unknown): error is StoreUnavailableError {
  return (
    error instanceof StoreUnavailableError ||
    (error instanceof Error && error.name === "StoreUnavailableError")
  );
}
