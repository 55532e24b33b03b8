import type { SessionKey, StoredDelta, TurnEventLog } from "@aptix/core";
import { and, asc, eq, gt } from "drizzle-orm";
import type { StoreDatabase } from "./drizzle-session-store.js";
import { turnEvents } from "./schema.js";

/** The TurnEventLog on drizzle: one multi-row insert per flush, one indexed read per poll. */
export class DrizzleTurnEventLog implements TurnEventLog {
  readonly #db: StoreDatabase;

  constructor(db: StoreDatabase) {
    this.#db = db;
  }

  async append(key: SessionKey, turnId: string, deltas: readonly StoredDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    await this.#db
      .insert(turnEvents)
      .values(deltas.map(({ round, seq, delta }) => ({ ...key, turnId, round, seq, delta })))
      // A retried flush writes the same rows again: keep the first.
      .onConflictDoNothing();
  }

  async list(key: SessionKey, turnId: string, round: number, afterSeq: number): Promise<StoredDelta[]> {
    return this.#db
      .select({ round: turnEvents.round, seq: turnEvents.seq, delta: turnEvents.delta })
      .from(turnEvents)
      .where(
        and(
          eq(turnEvents.principal, key.principal),
          eq(turnEvents.sessionId, key.sessionId),
          eq(turnEvents.turnId, turnId),
          eq(turnEvents.round, round),
          gt(turnEvents.seq, afterSeq),
        ),
      )
      .orderBy(asc(turnEvents.seq));
  }
}
