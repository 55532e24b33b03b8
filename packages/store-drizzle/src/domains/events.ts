import type { PruneTurnEventsInput, SessionKey, StoredDelta, TurnEventLog } from "@aptix/core";
import { and, asc, eq, gt, lt, or } from "drizzle-orm";
import { turnEvents, turns } from "../schema.js";
import type { StoreDatabase } from "./rows.js";

/** The channel migration 0003's triggers notify, with `[schema, principal, sessionId, turnId]` as JSON. */
const TURN_CHANGED_CHANNEL = "aptix_turn_changed";

/** The channel migration 0009's trigger notifies when a turn is cancelled, with the same payload. */
const TURN_CANCELLED_CHANNEL = "aptix_turn_cancelled";

/** Listens on a channel of the database until the answered `stop`: postgres.js's or PGlite's `listen`. */
export type ListenToChannel = (
  channel: string,
  onPayload: (payload: string) => void,
) => Promise<() => Promise<void>>;

/**
 * The TurnEventLog on drizzle: one multi-row insert per flush, one indexed read per poll. `prune` goes by the
 * `turns` table of the same schema: it reads which turns with events ended before the cutoff (two statements,
 * each bounded by its `limit`), then deletes their rows. `listen` hears of other instances' changes through
 * the triggers of migration 0003 (a NOTIFY at the commit of new deltas, or of a streamed turn's rounds), when
 * the store is given a way to listen: on Postgres, where instances share the database; PGlite serves one process,
 * whose service wakes its own followers.
 */
export class DrizzleTurnEventLog implements TurnEventLog {
  readonly #db: StoreDatabase;
  readonly #notifications: { schema: string; listen: ListenToChannel } | undefined;

  constructor(db: StoreDatabase, notifications?: { schema: string; listen: ListenToChannel }) {
    this.#db = db;
    this.#notifications = notifications;
  }

  listen(onChange: (key: SessionKey, turnId: string) => void): Promise<() => Promise<void>> {
    return this.#listenTo(TURN_CHANGED_CHANNEL, onChange);
  }

  listenCancels(onCancel: (key: SessionKey, turnId: string) => void): Promise<() => Promise<void>> {
    return this.#listenTo(TURN_CANCELLED_CHANNEL, onCancel);
  }

  async #listenTo(
    channel: string,
    onChange: (key: SessionKey, turnId: string) => void,
  ): Promise<() => Promise<void>> {
    if (this.#notifications === undefined) return async () => {};
    const { schema, listen } = this.#notifications;
    return listen(channel, (payload) => {
      const [inSchema, principal, sessionId, turnId] = JSON.parse(payload) as string[];
      // One channel serves every schema of the database: only this store's turns concern it.
      if (inSchema === schema && principal && sessionId && turnId) onChange({ principal, sessionId }, turnId);
    });
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

  async prune({ endedBefore, limit }: PruneTurnEventsInput): Promise<number> {
    // Like the session store's `limit`s: below 1 prunes nothing, a fraction rounds up.
    const count = Math.ceil(limit);
    if (!(count > 0)) return 0;
    const ended = await this.#db
      .selectDistinct({
        principal: turnEvents.principal,
        sessionId: turnEvents.sessionId,
        turnId: turnEvents.turnId,
      })
      .from(turnEvents)
      .innerJoin(
        turns,
        and(
          eq(turns.principal, turnEvents.principal),
          eq(turns.sessionId, turnEvents.sessionId),
          eq(turns.turnId, turnEvents.turnId),
        ),
      )
      .where(lt(turns.completedAt, endedBefore))
      .limit(count);
    if (ended.length === 0) return 0;
    await this.#db
      .delete(turnEvents)
      .where(
        or(
          ...ended.map((turn) =>
            and(
              eq(turnEvents.principal, turn.principal),
              eq(turnEvents.sessionId, turn.sessionId),
              eq(turnEvents.turnId, turn.turnId),
            ),
          ),
        ),
      );
    return ended.length;
  }
}
