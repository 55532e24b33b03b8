import { randomUUID } from "node:crypto";
import type {
  AppendTurnEventsInput,
  PruneTurnEventsInput,
  SessionKey,
  StoredDelta,
  TurnEventLog,
} from "@aptix/core";
import { and, asc, eq, gt, lt, or, sql } from "drizzle-orm";
import { sessions, turnEvents, turns } from "../schema.js";
import { GroupedWrites } from "./grouped-writes.js";
import { rowsWhere, type StoreDatabase } from "./rows.js";

/** The channel migration 0003's triggers notify, with `[schema, principal, sessionId, turnId]` as JSON. */
const TURN_CHANGED_CHANNEL = "aptix_turn_changed";

/** The channel migration 0009's trigger notifies when a turn is cancelled, with the same payload. */
const TURN_CANCELLED_CHANNEL = "aptix_turn_cancelled";

/** Where `listenerHeard` sends its probes, and every instance's listener hears them. */
const LISTENER_PROBE_CHANNEL = "aptix_listener_probe";

/** The checks in a row that heard no probe before the listener counts as deaf. */
const DEAF_AFTER_MISSES = 3;

/** How the log hears other instances: on Postgres, where instances share the database. */
export interface Notifications {
  /** The store's schema: the one whose turns concern it. */
  schema: string;
  listen: ListenToChannel;
  /** Told of a notification that was not understood, which is ignored. */
  onWarning?: (message: string, detail: Record<string, unknown>) => void;
}

/** A trigger's payload, `[schema, principal, sessionId, turnId]` as JSON: undefined for anything else. */
function turnOf(payload: string): [string, string, string, string] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  return Array.isArray(parsed) &&
    parsed.length === 4 &&
    parsed.every((part) => typeof part === "string" && part !== "")
    ? (parsed as [string, string, string, string])
    : undefined;
}

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
  readonly #append: ReturnType<typeof appendWhileLeasesHeld>;
  /** Appends asked for while one is written go in one statement: one a flush interval, not one a turn. */
  readonly #appends = new GroupedWrites((inputs: AppendTurnEventsInput[]) => this.#appendAll(inputs));
  readonly #notifications: Notifications | undefined;
  /** The listener check's: what it sent last, and the last of its sends it heard back. */
  /** The probes heard so far, how many the previous call had seen, and the calls in a row that saw none. */
  readonly #probe: {
    listening?: Promise<unknown>;
    sent: boolean;
    heard: number;
    seen: number;
    misses: number;
  } = {
    sent: false,
    heard: 0,
    seen: 0,
    misses: 0,
  };

  constructor(db: StoreDatabase, notifications?: Notifications) {
    this.#db = db;
    this.#append = appendWhileLeasesHeld(db);
    this.#notifications = notifications;
  }

  /**
   * Whether this store hears notifications: it sends one on a channel every instance listens on, and answers
   * whether the listener heard any (its own or another instance's) since the previous call. One silent interval
   * may be a busy machine or database; three in a row (`DEAF_AFTER_MISSES`) is a dropped `LISTEN` connection or a
   * pooler that cannot listen (PgBouncer in transaction mode). Always true without notifications (PGlite: one
   * process, nothing to hear).
   */
  async listenerHeard(): Promise<boolean> {
    if (this.#notifications === undefined) return true;
    const { listen } = this.#notifications;
    const probe = this.#probe;
    probe.listening ??= listen(LISTENER_PROBE_CHANNEL, () => {
      probe.heard++;
    }).catch(() => {
      probe.listening = undefined;
    });
    await probe.listening;
    const first = !probe.sent;
    probe.misses = first || probe.heard > probe.seen ? 0 : probe.misses + 1;
    probe.seen = probe.heard;
    probe.sent = true;
    await this.#db.execute(sql`select pg_notify(${LISTENER_PROBE_CHANNEL}, ${randomUUID()})`);
    return probe.misses < DEAF_AFTER_MISSES && probe.listening !== undefined;
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
    const { schema, listen, onWarning } = this.#notifications;
    return listen(channel, (payload) => {
      const turn = turnOf(payload);
      // Not from the triggers (someone's own NOTIFY on the channel): told and ignored, the listener goes on.
      if (turn === undefined) {
        onWarning?.("ignored a notification that names no turn", { channel, payload: payload.slice(0, 200) });
        return;
      }
      const [inSchema, principal, sessionId, turnId] = turn;
      // One channel serves every schema of the database: only this store's turns concern it.
      if (inSchema === schema) onChange({ principal, sessionId }, turnId);
    });
  }

  append(input: AppendTurnEventsInput): Promise<boolean> {
    if (input.deltas.length === 0) return Promise.resolve(true);
    return this.#appends.add(input);
  }

  /** The deltas of several turns in one statement, each turn's while its lease is held (`appendWhileLeasesHeld`). */
  async #appendAll(inputs: AppendTurnEventsInput[]): Promise<boolean[]> {
    const rows = inputs.flatMap(({ key, turnId, leaseOwner, deltas }) =>
      deltas.map(({ round, seq, delta, event }) => ({
        principal: key.principal,
        session_id: key.sessionId,
        turn_id: turnId,
        round,
        seq,
        delta,
        event: event ?? null,
        lease_owner: leaseOwner,
      })),
    );
    const appended = new Set(
      (await this.#append.execute({ rows: JSON.stringify(rows) })).map((row) => nameOf(row, row.turnId)),
    );
    // A retried flush's rows are there already (`on conflict do nothing`): the lease held all the same.
    return Promise.all(
      inputs.map(
        ({ key, turnId, leaseOwner }) =>
          appended.has(nameOf(key, turnId)) || this.#holdsLease(key, leaseOwner),
      ),
    );
  }

  async #holdsLease(key: SessionKey, owner: string): Promise<boolean> {
    const [row] = await this.#db
      .select({ owner: sessions.leaseOwner })
      .from(sessions)
      .where(and(eq(sessions.principal, key.principal), eq(sessions.sessionId, key.sessionId)));
    return row?.owner === owner;
  }

  async list(
    key: SessionKey,
    turnId: string,
    round: number,
    afterSeq: number,
    limit?: number,
  ): Promise<StoredDelta[]> {
    const query = this.#db
      .select({
        round: turnEvents.round,
        seq: turnEvents.seq,
        delta: turnEvents.delta,
        event: turnEvents.event,
      })
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
    const rows = await (limit === undefined ? query : query.limit(limit));
    return rows.map(({ event, ...delta }) => (event === "context.compacted" ? { ...delta, event } : delta));
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

/**
 * The deltas of several turns, in one statement, each row while its session's lease is its `lease_owner`'s. The
 * guard locks the session row (`for key share`), which conflicts with a delete's `for update`: a delete either
 * waits for this insert and then deletes its rows, or goes first and leaves this insert nothing to insert for it.
 * It commits without waiting for the disk (`synchronous_commit` off for its own transaction): the deltas matter
 * to a resuming client while the turn runs, and the round's settlement, which waits, flushes them with its own. A
 * database crash in between loses deltas of a round the crash ends anyway.
 */
function appendWhileLeasesHeld(db: StoreDatabase) {
  const held = sql`exists (select 1 from ${sessions} where ${sessions.principal} = r.principal and ${sessions.sessionId} = r.session_id and ${sessions.leaseOwner} = e.value ->> 'lease_owner' for key share) and set_config('synchronous_commit', 'off', true) is not null`;
  const from = sql`jsonb_array_elements(${sql.placeholder("rows")}::jsonb) as e, jsonb_populate_record(null::${turnEvents}, e.value) as r`;
  return db
    .insert(turnEvents)
    .select(rowsWhere(turnEvents, { from }, held))
    .onConflictDoNothing()
    .returning({
      principal: turnEvents.principal,
      sessionId: turnEvents.sessionId,
      turnId: turnEvents.turnId,
    })
    .prepare("append_turn_events");
}

/** A turn's name, to find it among the rows a statement answered. */
function nameOf(key: SessionKey, turnId: string): string {
  return JSON.stringify([key.principal, key.sessionId, turnId]);
}
