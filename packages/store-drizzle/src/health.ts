import type { StoreDatabase } from "./domains/rows.js";
import { pendingMigrations } from "./migrations.js";
import { messageOf } from "./store-unavailable.js";

export interface Readiness {
  ready: boolean;
  /** Why the store is not ready; absent when it is. */
  reason?: string;
}

/** How long a readiness probe waits for the database. */
const READINESS_TIMEOUT_MS = 5_000;

/**
 * The store's readiness probe: ready when it is open, the database answers within READINESS_TIMEOUT_MS, and
 * every migration this package ships is applied.
 */
export function readinessProbe(
  db: StoreDatabase,
  schema: string,
  isClosed: () => boolean,
): () => Promise<Readiness> {
  const pending = pendingMigrations(db, schema);
  return async () => {
    if (isClosed()) return { ready: false, reason: "The store is closed." };
    try {
      const migrations = await withTimeout(
        pending(),
        READINESS_TIMEOUT_MS,
        `The database did not answer within ${READINESS_TIMEOUT_MS} ms.`,
      );
      if (migrations.pending > 0) {
        return {
          ready: false,
          reason: `${migrations.pending} of ${migrations.total} database migrations are not applied.`,
        };
      }
      return { ready: true };
    } catch (error) {
      return { ready: false, reason: `The database is unreachable: ${messageOf(error)}` };
    }
  };
}

async function withTimeout<T>(work: PromiseLike<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
