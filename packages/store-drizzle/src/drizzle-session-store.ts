import {
  type ClaimSessionInput,
  type ClaimSessionResult,
  type Clock,
  EMPTY_CURSOR,
  type FindExpiredLeasesInput,
  type LlmCallRecord,
  type ModeHistoryEntry,
  type RecordLlmCallInput,
  type SessionKey,
  type SessionPatch,
  type SessionRecord,
  type SessionStore,
  type StartTurnInput,
  systemClock,
  type TranscriptItem,
  type TurnPatch,
  type TurnRecord,
  type UpdateTurnInput,
} from "@aptix/core";
import { and, asc, eq, gte, isNotNull, isNull, lt, lte, or, type SQL, sql } from "drizzle-orm";
import type { PgColumn, PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { llmCalls, modeHistory, sessions, transcriptItems, turns } from "./schema.js";

/** A drizzle Postgres database over either driver (postgres.js or PGlite). */
export type StoreDatabase = PgDatabase<PgQueryResultHKT>;
type StoreTransaction = Parameters<Parameters<StoreDatabase["transaction"]>[0]>[0];

type SessionRow = typeof sessions.$inferSelect;
type TurnRow = typeof turns.$inferSelect;
type LlmCallRow = typeof llmCalls.$inferSelect;
type ModeHistoryRow = typeof modeHistory.$inferSelect;

/** Thrown inside a transaction to roll it back and answer `answer` instead. */
class Refusal<T> {
  constructor(readonly answer: T) {}
}

/**
 * A `SessionStore` on drizzle-orm, with the semantics of core's `InMemorySessionStore` (checked by
 * `describeSessionStoreContract`), safe for many server instances sharing one database:
 *
 * - Leases are judged by the database's clock: deadlines are `now() + duration` and expiry is
 *   `lease_expires_at <= now()`, computed in SQL, so instances whose clocks disagree agree on every lease.
 * - `claimSession` is one statement: an upsert that creates the session with the lease, or takes the lease of
 *   an existing session only when it is free (`ON CONFLICT … DO UPDATE … WHERE lease free`). Postgres decides
 *   insert-or-update atomically and re-checks the condition on the latest row, so of two racing claims exactly
 *   one gets the row back.
 * - Every lease-guarded write is one short transaction that starts by writing (or locking) the session row
 *   `WHERE lease_owner = $owner`: a claim racing it waits for the commit and then sees the new state. A refused
 *   step rolls the whole transaction back, so a refused write changes nothing.
 * - No transaction or pooled connection outlives a method call, and each call sends a fixed number of
 *   statements whatever the size of the session's history: only `loadTranscript` and the `list*` methods read
 *   more than one row, and `loadTranscript` reads only `position < length`.
 *
 * Counted with BEGIN/COMMIT: getSession, getTurn, loadTranscript, list*, findExpiredLeases, releaseLease 1;
 * claimSession 1 (2 when refused without `create`); startTurn 4 (5 when abandoning a turn); updateTurn 4;
 * recordLlmCall 4 without progress, 6 with; changeMode 4.
 */
export class DrizzleSessionStore implements SessionStore {
  readonly #db: StoreDatabase;
  readonly #clock: Clock;
  readonly #leaseClock: Clock | undefined;

  /**
   * `clock` stamps `updatedAt` on writes that are not given a time (`updateTurn`, `recordLlmCall`).
   * `leaseClock` judges leases in place of the database's `now()`: for tests that move time by hand only, as
   * instances agree on leases only through the database's clock.
   */
  constructor(db: StoreDatabase, clock: Clock = systemClock, options: { leaseClock?: Clock } = {}) {
    this.#db = db;
    this.#clock = clock;
    this.#leaseClock = options.leaseClock;
  }

  async getSession(key: SessionKey): Promise<SessionRecord | undefined> {
    const [row] = await this.#db.select().from(sessions).where(sessionWhere(key)).limit(1);
    return row === undefined ? undefined : toSession(row);
  }

  async getTurn(key: SessionKey, turnId: string): Promise<TurnRecord | undefined> {
    const [row] = await this.#db
      .select()
      .from(turns)
      .where(and(keyWhere(turns, key), eq(turns.turnId, turnId)))
      .limit(1);
    return row === undefined ? undefined : toTurn(row);
  }

  async claimSession({ key, lease, now, create }: ClaimSessionInput): Promise<ClaimSessionResult> {
    const leaseFree = or(isNull(sessions.leaseOwner), lte(sessions.leaseExpiresAt, this.#leaseNow()));
    const takeLease = { leaseOwner: lease.owner, leaseExpiresAt: this.#leaseNow(lease.durationMs) };
    if (create !== undefined) {
      const [row] = await this.#db
        .insert(sessions)
        .values({
          principal: key.principal,
          sessionId: key.sessionId,
          conversationContextId: create.conversationContextId,
          agentContextId: create.agentContextId,
          mode: create.mode,
          solutionContextText: null,
          cursor: EMPTY_CURSOR,
          openTurnId: null,
          turnCount: 0,
          ...takeLease,
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoUpdate({
          target: [sessions.principal, sessions.sessionId],
          set: takeLease,
          setWhere: leaseFree,
        })
        .returning();
      return row === undefined ? { outcome: "busy" } : { outcome: "claimed", session: toSession(row) };
    }
    const [row] = await this.#db
      .update(sessions)
      .set(takeLease)
      .where(and(sessionWhere(key), leaseFree))
      .returning();
    if (row !== undefined) return { outcome: "claimed", session: toSession(row) };
    const [existing] = await this.#db
      .select({ principal: sessions.principal })
      .from(sessions)
      .where(sessionWhere(key))
      .limit(1);
    return existing === undefined ? { outcome: "not_found" } : { outcome: "busy" };
  }

  async releaseLease(key: SessionKey, owner: string): Promise<void> {
    await this.#db
      .update(sessions)
      .set({ leaseOwner: null, leaseExpiresAt: null })
      .where(and(sessionWhere(key), eq(sessions.leaseOwner, owner)));
  }

  async startTurn({
    turn,
    sessionPatch,
    abandonTurnId,
    leaseOwner,
  }: StartTurnInput): Promise<"started" | "turn_exists" | "lease_lost"> {
    const startedAt = new Date(turn.createdAt);
    return this.#transaction(async (tx) => {
      const held = await tx
        .update(sessions)
        .set({
          ...sessionPatchSet(sessionPatch),
          turnCount: sql`${sessions.turnCount} + 1`,
          updatedAt: startedAt,
        })
        .where(and(sessionWhere(turn), eq(sessions.leaseOwner, leaseOwner)))
        .returning({ principal: sessions.principal });
      if (held.length === 0) throw new Refusal("lease_lost" as const);
      const inserted = await tx
        .insert(turns)
        .values(turnRow(turn))
        .onConflictDoNothing()
        .returning({ turnId: turns.turnId });
      if (inserted.length === 0) throw new Refusal("turn_exists" as const);
      if (abandonTurnId !== undefined) {
        await tx
          .update(turns)
          .set({ status: "abandoned", pending: null, updatedAt: startedAt, completedAt: startedAt })
          .where(and(keyWhere(turns, turn), eq(turns.turnId, abandonTurnId)));
      }
      return "started" as const;
    });
  }

  async updateTurn({
    key,
    turnId,
    expectStatus,
    turnPatch,
    sessionPatch,
    leaseOwner,
    releaseLease,
  }: UpdateTurnInput): Promise<boolean> {
    const now = this.#clock.now();
    const sessionSet: Partial<typeof sessions.$inferInsert> = {};
    if (sessionPatch !== undefined)
      Object.assign(sessionSet, sessionPatchSet(sessionPatch), { updatedAt: now });
    if (releaseLease === true) Object.assign(sessionSet, { leaseOwner: null, leaseExpiresAt: null });
    const leaseHeld = and(sessionWhere(key), eq(sessions.leaseOwner, leaseOwner));
    return this.#transaction(async (tx) => {
      // Check the lease and lock the session row: by writing it when the call changes it, else FOR NO KEY UPDATE.
      const held =
        Object.keys(sessionSet).length > 0
          ? await tx
              .update(sessions)
              .set(sessionSet)
              .where(leaseHeld)
              .returning({ principal: sessions.principal })
          : await tx
              .select({ principal: sessions.principal })
              .from(sessions)
              .where(leaseHeld)
              .for("no key update");
      if (held.length === 0) throw new Refusal(false);
      const updated = await tx
        .update(turns)
        .set({ ...turnPatchSet(turnPatch), updatedAt: now })
        .where(
          and(
            keyWhere(turns, key),
            eq(turns.turnId, turnId),
            expectStatus === undefined ? undefined : eq(turns.status, expectStatus),
          ),
        )
        .returning({ turnId: turns.turnId });
      if (updated.length === 0) throw new Refusal(false);
      return true;
    });
  }

  async recordLlmCall({ call, progress, lease }: RecordLlmCallInput): Promise<boolean> {
    const now = this.#clock.now();
    const key: SessionKey = { principal: call.principal, sessionId: call.sessionId };
    return this.#transaction(async (tx) => {
      const held = await tx
        .update(sessions)
        .set({
          leaseExpiresAt: this.#leaseNow(lease.durationMs),
          ...(progress === undefined ? {} : { cursor: progress.cursor, updatedAt: now }),
        })
        .where(and(sessionWhere(key), eq(sessions.leaseOwner, lease.owner)))
        .returning({ principal: sessions.principal });
      if (held.length === 0) throw new Refusal(false);
      const row = llmCallRow(call);
      const { principal, sessionId, turnId, callIndex, ...rest } = row;
      await tx
        .insert(llmCalls)
        .values(row)
        .onConflictDoUpdate({
          target: [llmCalls.principal, llmCalls.sessionId, llmCalls.turnId, llmCalls.callIndex],
          set: rest,
        });
      if (progress !== undefined) {
        await tx
          .delete(transcriptItems)
          .where(and(keyWhere(transcriptItems, key), gte(transcriptItems.position, progress.fromPosition)));
        if (progress.items.length > 0) {
          await tx.insert(transcriptItems).values(
            progress.items.map((item, offset) => ({
              principal: key.principal,
              sessionId: key.sessionId,
              position: progress.fromPosition + offset,
              item,
            })),
          );
        }
      }
      return true;
    });
  }

  async changeMode(entry: ModeHistoryEntry, leaseOwner: string): Promise<boolean> {
    return this.#transaction(async (tx) => {
      const held = await tx
        .update(sessions)
        .set({ mode: entry.newMode, updatedAt: new Date(entry.changedAt) })
        .where(and(sessionWhere(entry), eq(sessions.leaseOwner, leaseOwner)))
        .returning({ principal: sessions.principal });
      if (held.length === 0) throw new Refusal(false);
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

  async loadTranscript(key: SessionKey, length: number): Promise<TranscriptItem[]> {
    const rows = await this.#db
      .select({ item: transcriptItems.item })
      .from(transcriptItems)
      .where(and(keyWhere(transcriptItems, key), lt(transcriptItems.position, length)))
      .orderBy(asc(transcriptItems.position));
    return rows.map((row) => row.item);
  }

  async listTurns(key: SessionKey): Promise<TurnRecord[]> {
    const rows = await this.#db
      .select()
      .from(turns)
      .where(keyWhere(turns, key))
      .orderBy(asc(turns.sequence), asc(turns.createdAt), asc(turns.turnId));
    return rows.map(toTurn);
  }

  async listModeHistory(key: SessionKey): Promise<ModeHistoryEntry[]> {
    const rows = await this.#db
      .select()
      .from(modeHistory)
      .where(keyWhere(modeHistory, key))
      .orderBy(asc(modeHistory.id));
    return rows.map(toModeHistoryEntry);
  }

  async listLlmCalls(key: SessionKey, turnId: string): Promise<LlmCallRecord[]> {
    const rows = await this.#db
      .select()
      .from(llmCalls)
      .where(and(keyWhere(llmCalls, key), eq(llmCalls.turnId, turnId)))
      .orderBy(asc(llmCalls.callIndex));
    return rows.map(toLlmCall);
  }

  async findExpiredLeases({ expiredForMs, limit }: FindExpiredLeasesInput): Promise<SessionKey[]> {
    // Like the in-memory store, a limit below 1 finds nothing and a fractional one rounds up.
    const count = Math.ceil(limit);
    if (!(count > 0)) return [];
    return this.#db
      .select({ principal: sessions.principal, sessionId: sessions.sessionId })
      .from(sessions)
      .where(
        and(
          isNotNull(sessions.openTurnId),
          isNotNull(sessions.leaseOwner),
          lte(sessions.leaseExpiresAt, this.#leaseNow(-expiredForMs)),
        ),
      )
      .orderBy(asc(sessions.leaseExpiresAt))
      .limit(count);
  }

  /** The leases' clock, in SQL: the database's `now()` (or `leaseClock`'s time), `offsetMs` on. */
  #leaseNow(offsetMs = 0): SQL {
    const now =
      this.#leaseClock === undefined ? sql`now()` : sql`${this.#leaseClock.now().toISOString()}::timestamptz`;
    return offsetMs === 0 ? now : sql`(${now} + ${offsetMs}::double precision * interval '1 millisecond')`;
  }

  /** Runs `work` in one transaction; a `Refusal` thrown inside rolls it back and becomes the answer. */
  async #transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    try {
      return await this.#db.transaction(work);
    } catch (error) {
      if (error instanceof Refusal) return error.answer as T;
      throw error;
    }
  }
}

function keyWhere(table: { principal: PgColumn; sessionId: PgColumn }, key: SessionKey): SQL | undefined {
  return and(eq(table.principal, key.principal), eq(table.sessionId, key.sessionId));
}

function sessionWhere(key: SessionKey): SQL | undefined {
  return keyWhere(sessions, key);
}

/** The columns a `SessionPatch` sets: only the patchable keys with a value other than `undefined`. */
function sessionPatchSet(patch: SessionPatch): Partial<typeof sessions.$inferInsert> {
  const set: Partial<typeof sessions.$inferInsert> = {};
  if (patch.mode !== undefined) set.mode = patch.mode;
  if (patch.solutionContextText !== undefined) set.solutionContextText = patch.solutionContextText;
  if (patch.cursor !== undefined) set.cursor = patch.cursor;
  if (patch.openTurnId !== undefined) set.openTurnId = patch.openTurnId;
  return set;
}

/** The columns a `TurnPatch` sets: only the patchable keys with a value other than `undefined`. */
function turnPatchSet(patch: TurnPatch): Partial<typeof turns.$inferInsert> {
  const set: Partial<typeof turns.$inferInsert> = {};
  if (patch.status !== undefined) set.status = patch.status;
  if (patch.rounds !== undefined) set.rounds = patch.rounds;
  if (patch.pending !== undefined) set.pending = patch.pending;
  if (patch.toolExecutions !== undefined) set.toolExecutions = patch.toolExecutions;
  if (patch.files !== undefined) set.files = patch.files;
  if (patch.usage !== undefined) set.usage = patch.usage;
  if (patch.llmCallCount !== undefined) set.llmCallCount = patch.llmCallCount;
  if (patch.error !== undefined) set.error = patch.error;
  if (patch.completedAt !== undefined)
    set.completedAt = patch.completedAt === null ? null : new Date(patch.completedAt);
  return set;
}

function turnRow(turn: TurnRecord): typeof turns.$inferInsert {
  return {
    principal: turn.principal,
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    sequence: turn.sequence,
    status: turn.status,
    mode: turn.mode,
    stream: turn.stream,
    rounds: turn.rounds,
    pending: turn.pending,
    startCursor: turn.startCursor,
    toolExecutions: turn.toolExecutions,
    files: turn.files,
    usage: turn.usage,
    llmCallCount: turn.llmCallCount,
    error: turn.error,
    createdAt: new Date(turn.createdAt),
    updatedAt: new Date(turn.updatedAt),
    completedAt: turn.completedAt === null ? null : new Date(turn.completedAt),
  };
}

function llmCallRow(call: LlmCallRecord): typeof llmCalls.$inferInsert {
  return {
    principal: call.principal,
    sessionId: call.sessionId,
    turnId: call.turnId,
    callIndex: call.index,
    request: call.request,
    response: call.response,
    // jsonb has no `undefined`: an absent raw payload is kept as null.
    providerRequest: call.providerRequest ?? null,
    providerResponse: call.providerResponse ?? null,
    error: call.error,
    startedAt: new Date(call.startedAt),
    durationMs: call.durationMs,
  };
}

function toSession(row: SessionRow): SessionRecord {
  return {
    principal: row.principal,
    sessionId: row.sessionId,
    conversationContextId: row.conversationContextId,
    agentContextId: row.agentContextId,
    mode: row.mode,
    solutionContextText: row.solutionContextText,
    cursor: row.cursor,
    openTurnId: row.openTurnId,
    turnCount: row.turnCount,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function toTurn(row: TurnRow): TurnRecord {
  return {
    principal: row.principal,
    sessionId: row.sessionId,
    turnId: row.turnId,
    sequence: row.sequence,
    status: row.status,
    mode: row.mode,
    stream: row.stream,
    rounds: row.rounds,
    pending: row.pending,
    startCursor: row.startCursor,
    toolExecutions: row.toolExecutions,
    files: row.files,
    usage: row.usage,
    llmCallCount: row.llmCallCount,
    error: row.error,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    completedAt: row.completedAt,
  };
}

function toLlmCall(row: LlmCallRow): LlmCallRecord {
  return {
    principal: row.principal,
    sessionId: row.sessionId,
    turnId: row.turnId,
    index: row.callIndex,
    request: row.request,
    response: row.response,
    providerRequest: row.providerRequest,
    providerResponse: row.providerResponse,
    error: row.error,
    startedAt: row.startedAt,
    durationMs: row.durationMs,
  };
}

function toModeHistoryEntry(row: ModeHistoryRow): ModeHistoryEntry {
  return {
    principal: row.principal,
    sessionId: row.sessionId,
    turnId: row.turnId,
    previousMode: row.previousMode,
    newMode: row.newMode,
    reason: row.reason,
    changedBy: row.changedBy,
    changedAt: row.changedAt,
  };
}
