import type {
  FindExpiredLeasesInput,
  ModeHistoryEntry,
  SessionKey,
  SessionRecord,
  TurnKey,
  TurnRecord,
} from "@aptix/core";
import { and, asc, eq, isNotNull, lte, sql } from "drizzle-orm";
import { modeHistory, sessions, turns } from "../schema.js";
import { type LeaseClock, whileLeaseHeld } from "./lease.js";
import {
  keyOf,
  modeHistoryJson,
  modeHistoryWrite,
  PreparedShapes,
  placeholders,
  type StoreDatabase,
  toModeHistoryEntry,
  toSession,
  toTurn,
} from "./rows.js";

/** A session's key as placeholders, for prepared statements. */
const principal = sql.placeholder("principal");
const sessionId = sql.placeholder("sessionId");

function prepared(db: StoreDatabase) {
  return {
    getSession: db
      .select()
      .from(sessions)
      .where(and(eq(sessions.principal, principal), eq(sessions.sessionId, sessionId)))
      .limit(1)
      .prepare("get_session"),
    getTurn: db
      .select()
      .from(turns)
      .where(
        and(
          eq(turns.principal, principal),
          eq(turns.sessionId, sessionId),
          eq(turns.turnId, sql.placeholder("turnId")),
        ),
      )
      .limit(1)
      .prepare("get_turn"),
    releaseLease: db
      .update(sessions)
      .set({ leaseOwner: null, leaseExpiresAt: null, version: sql`${sessions.version} + 1` })
      .where(
        and(
          eq(sessions.principal, principal),
          eq(sessions.sessionId, sessionId),
          eq(sessions.leaseOwner, sql.placeholder("owner")),
        ),
      )
      .prepare("release_lease"),
    // Through the primary key, sorted: no other index starts with a session's key.
    listTurns: db
      .select()
      .from(turns)
      .where(and(eq(turns.principal, principal), eq(turns.sessionId, sessionId)))
      .orderBy(asc(turns.sequence), asc(turns.createdAt), asc(turns.turnId))
      .prepare("list_turns"),
    // The turns named in a JSON array, through the primary key: one read however many rounds poll.
    runningAmong: db
      .select({ principal: turns.principal, sessionId: turns.sessionId, turnId: turns.turnId })
      .from(turns)
      .where(
        and(
          eq(turns.status, "running"),
          sql`(${turns.principal}, ${turns.sessionId}, ${turns.turnId}) in (select * from jsonb_to_recordset(${sql.placeholder("turns")}::jsonb) as r(principal text, session_id text, turn_id text))`,
        ),
      )
      .prepare("running_among"),
    listModeHistory: db
      .select()
      .from(modeHistory)
      .where(and(eq(modeHistory.principal, principal), eq(modeHistory.sessionId, sessionId)))
      .orderBy(asc(modeHistory.id))
      .prepare("list_mode_history"),
  };
}

/**
 * Sessions and their turns: reads by key, the lease-guarded writes of a running turn besides its transitions
 * (`changeMode`, `releaseLease`), and the reaper's `findExpiredLeases`. A guarded write is one statement that
 * writes the session row while the lease is held, and the rest only then (`whileLeaseHeld`). Every read goes by
 * a primary key, or reads one session's rows through it.
 */
export class SessionsAndTurns {
  readonly #db: StoreDatabase;
  readonly #leaseClock: LeaseClock;
  readonly #prepared: ReturnType<typeof prepared>;
  readonly #shapes = new PreparedShapes();

  constructor(db: StoreDatabase, leaseClock: LeaseClock) {
    this.#db = db;
    this.#leaseClock = leaseClock;
    this.#prepared = prepared(db);
  }

  async getSession(key: SessionKey): Promise<SessionRecord | undefined> {
    const [row] = await this.#prepared.getSession.execute(keyOf(key));
    return row === undefined ? undefined : toSession(row);
  }

  async getTurn(key: SessionKey, turnId: string): Promise<TurnRecord | undefined> {
    const [row] = await this.#prepared.getTurn.execute({ ...keyOf(key), turnId });
    return row === undefined ? undefined : toTurn(row);
  }

  async runningAmong(keys: readonly TurnKey[]): Promise<TurnKey[]> {
    if (keys.length === 0) return [];
    const named = keys.map(({ principal, sessionId, turnId }) => ({
      principal,
      session_id: sessionId,
      turn_id: turnId,
    }));
    return this.#prepared.runningAmong.execute({ turns: JSON.stringify(named) });
  }

  async listTurns(key: SessionKey): Promise<TurnRecord[]> {
    return (await this.#prepared.listTurns.execute(keyOf(key))).map(toTurn);
  }

  async listModeHistory(key: SessionKey): Promise<ModeHistoryEntry[]> {
    return (await this.#prepared.listModeHistory.execute(keyOf(key))).map(toModeHistoryEntry);
  }

  async releaseLease(key: SessionKey, owner: string): Promise<void> {
    await this.#prepared.releaseLease.execute({ ...keyOf(key), owner });
  }

  async changeMode(entry: ModeHistoryEntry, leaseOwner: string): Promise<boolean> {
    const session = placeholders(sessions, "session_", {
      mode: entry.newMode,
      updatedAt: new Date(entry.changedAt),
    });
    const rows = await this.#shapes.send(
      "change_mode",
      () =>
        whileLeaseHeld(this.#db, { set: session.set }, (held) => [
          modeHistoryWrite(this.#db, "modeChange", held),
        ]),
      { ...keyOf(entry), owner: leaseOwner, ...session.values, modeChange: modeHistoryJson(entry) },
    );
    return rows.length > 0;
  }

  async findExpiredLeases({ expiredForMs, limit }: FindExpiredLeasesInput): Promise<SessionKey[]> {
    // Like the in-memory store, a limit below 1 finds nothing and a fractional one rounds up.
    const count = Math.ceil(limit);
    if (!(count > 0)) return [];
    return this.#shapes.send(
      "find_expired_leases",
      // From the running turns (a partial index holds them alone) to their sessions: no index on the session
      // row's lease or open turn, which every turn writes, so those writes stay HOT.
      () =>
        this.#db
          .select({ principal: sessions.principal, sessionId: sessions.sessionId })
          .from(turns)
          .innerJoin(
            sessions,
            and(
              eq(sessions.principal, turns.principal),
              eq(sessions.sessionId, turns.sessionId),
              eq(sessions.openTurnId, turns.turnId),
            ),
          )
          .where(
            and(
              eq(turns.status, "running"),
              isNotNull(sessions.leaseOwner),
              lte(sessions.leaseExpiresAt, this.#leaseClock.now("expiredForMs")),
            ),
          )
          .orderBy(asc(sessions.leaseExpiresAt))
          .limit(sql.placeholder("limit")),
      { expiredForMs: -expiredForMs, limit: count, ...this.#leaseClock.values() },
    );
  }
}
