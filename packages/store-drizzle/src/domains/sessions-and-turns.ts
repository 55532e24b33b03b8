import type {
  Clock,
  FindExpiredLeasesInput,
  ModeHistoryEntry,
  SessionKey,
  SessionRecord,
  TurnRecord,
  UpdateTurnInput,
} from "@aptix/core";
import { and, asc, eq, exists, isNotNull, lte, sql } from "drizzle-orm";
import { modeHistory, sessions, turns } from "../schema.js";
import { holdLease, type LeaseClock, type SessionSet } from "./lease.js";
import {
  keyWhere,
  Refusal,
  type StoreDatabase,
  sentPrepared,
  sessionPatchSet,
  toModeHistoryEntry,
  toSession,
  toTurn,
  transaction,
  turnPatchSet,
} from "./rows.js";
import { keyOf, type TranscriptAndTraces } from "./transcript-and-traces.js";

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
    listModeHistory: db
      .select()
      .from(modeHistory)
      .where(and(eq(modeHistory.principal, principal), eq(modeHistory.sessionId, sessionId)))
      .orderBy(asc(modeHistory.id))
      .prepare("list_mode_history"),
  };
}

/**
 * Sessions and their turns: reads by key, the lease-guarded writes of a running turn (`updateTurn`,
 * `changeMode`, `releaseLease`), and the reaper's `findExpiredLeases`. A guarded write is one transaction that
 * starts by writing (or locking) the session row while the lease is held (`holdLease`): refused, it writes
 * nothing. Every read goes by a primary key, or reads one session's rows through it.
 */
export class SessionsAndTurns {
  readonly #db: StoreDatabase;
  readonly #clock: Clock;
  readonly #leaseClock: LeaseClock;
  readonly #traces: TranscriptAndTraces;
  readonly #prepared: ReturnType<typeof prepared>;

  /** `traces` keeps the LLM calls a settlement carries. */
  constructor(db: StoreDatabase, clock: Clock, leaseClock: LeaseClock, traces: TranscriptAndTraces) {
    this.#db = db;
    this.#clock = clock;
    this.#leaseClock = leaseClock;
    this.#traces = traces;
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

  async listTurns(key: SessionKey): Promise<TurnRecord[]> {
    return (await this.#prepared.listTurns.execute(keyOf(key))).map(toTurn);
  }

  async listModeHistory(key: SessionKey): Promise<ModeHistoryEntry[]> {
    return (await this.#prepared.listModeHistory.execute(keyOf(key))).map(toModeHistoryEntry);
  }

  async releaseLease(key: SessionKey, owner: string): Promise<void> {
    await this.#prepared.releaseLease.execute({ ...keyOf(key), owner });
  }

  /**
   * One transaction: the session row's changes, guarded by the lease and the turn's status; then, sent
   * together, the turn's patch and the LLM calls it carries.
   */
  async updateTurn({
    key,
    turnId,
    expectStatus,
    turnPatch,
    sessionPatch,
    leaseOwner,
    releaseLease,
    llmCalls: calls = [],
  }: UpdateTurnInput): Promise<boolean> {
    const now = this.#clock.now();
    // The calls' progress first, then the patch: a failed turn's restored cursor wins over its calls'.
    const set: SessionSet = {};
    const progressed = calls.findLast((write) => write.progress !== undefined)?.progress;
    if (progressed !== undefined) Object.assign(set, { cursor: progressed.cursor, updatedAt: now });
    if (sessionPatch !== undefined) Object.assign(set, sessionPatchSet(sessionPatch), { updatedAt: now });
    if (releaseLease === true) Object.assign(set, { leaseOwner: null, leaseExpiresAt: null });
    const theTurn = and(keyWhere(turns, key), eq(turns.turnId, turnId));
    const turnAsExpected = exists(
      this.#db
        .select({ turnId: turns.turnId })
        .from(turns)
        .where(and(theTurn, expectStatus === undefined ? undefined : eq(turns.status, expectStatus))),
    );
    const writes = this.#traces.callWrites(key, calls);
    const written = await transaction(this.#db, async (tx) => {
      if (!(await holdLease(tx, key, leaseOwner, set, turnAsExpected))) throw new Refusal(false);
      await Promise.all([
        sentPrepared(
          tx
            .update(turns)
            .set({ ...turnPatchSet(turnPatch), updatedAt: now })
            .where(theTurn),
        ),
        ...writes.send(tx),
      ]);
      return true;
    });
    if (written) writes.committed();
    return written;
  }

  async changeMode(entry: ModeHistoryEntry, leaseOwner: string): Promise<boolean> {
    const set = { mode: entry.newMode, updatedAt: new Date(entry.changedAt) };
    return transaction(this.#db, async (tx) => {
      if (!(await holdLease(tx, entry, leaseOwner, set))) throw new Refusal(false);
      await tx.insert(modeHistory).values({
        principal: entry.principal,
        sessionId: entry.sessionId,
        turnId: entry.turnId,
        previousMode: entry.previousMode,
        newMode: entry.newMode,
        reason: entry.reason,
        changedBy: entry.changedBy,
        changedAt: new Date(entry.changedAt),
      });
      return true;
    });
  }

  async findExpiredLeases({ expiredForMs, limit }: FindExpiredLeasesInput): Promise<SessionKey[]> {
    // Like the in-memory store, a limit below 1 finds nothing and a fractional one rounds up.
    const count = Math.ceil(limit);
    if (!(count > 0)) return [];
    // From the running turns (a partial index holds them alone) to their sessions: no index on the session
    // row's lease or open turn, which every turn writes, so those writes stay HOT.
    return this.#db
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
          lte(sessions.leaseExpiresAt, this.#leaseClock.now(-expiredForMs)),
        ),
      )
      .orderBy(asc(sessions.leaseExpiresAt))
      .limit(count);
  }
}
