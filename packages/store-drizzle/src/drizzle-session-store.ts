import {
  type BeginTurnInput,
  type BeginTurnResult,
  type ClaimSessionInput,
  type ClaimSessionResult,
  type Clock,
  EMPTY_CURSOR,
  type FindExpiredLeasesInput,
  type LlmCallRecord,
  type ModeHistoryEntry,
  type RecordLlmCallInput,
  type ResumeTurnInput,
  type ResumeTurnResult,
  type SessionKey,
  type SessionRecord,
  type SessionStore,
  type StartTurnInput,
  systemClock,
  type TranscriptItem,
  type TurnRecord,
  type UpdateTurnInput,
} from "@aptix/core";
import { and, eq, isNull, lte, or, sql } from "drizzle-orm";
import { LeaseClock } from "./domains/lease.js";
import {
  keyWhere,
  Refusal,
  type StoreDatabase,
  type StoreTransaction,
  sessionPatchSet,
  toSession,
  toTurn,
  transaction,
  turnPatchSet,
  turnRow,
} from "./domains/rows.js";
import { SessionsAndTurns } from "./domains/sessions-and-turns.js";
import { TranscriptAndTraces } from "./domains/transcript-and-traces.js";
import { rowsOf } from "./rows-of.js";
import { sessions, turns } from "./schema.js";

export type { StoreDatabase } from "./domains/rows.js";

/**
 * A `SessionStore` on drizzle-orm, with the semantics of core's `InMemorySessionStore` (checked by
 * `describeSessionStoreContract`), safe for many server instances sharing one database. It delegates to its
 * domains (`src/domains/`): sessions and turns, and transcript and traces. Leases are judged by the database's
 * clock (`LeaseClock`), and every lease-guarded write is one short transaction that starts by writing (or
 * locking) the session row while the lease is held, so a claim racing it waits for its commit; no transaction
 * outlives a method call, and each call sends a fixed number of statements whatever the session's length.
 */
export class DrizzleSessionStore implements SessionStore {
  readonly #db: StoreDatabase;
  readonly #clock: Clock;
  readonly #leaseClock: LeaseClock;
  readonly #sessions: SessionsAndTurns;
  readonly #traces: TranscriptAndTraces;

  /**
   * `clock` stamps `updatedAt` on writes that are not given a time (`updateTurn`, `recordLlmCall`).
   * `leaseClock` judges leases in place of the database's `now()`: for tests that move time by hand only, as
   * instances agree on leases only through the database's clock.
   */
  constructor(db: StoreDatabase, clock: Clock = systemClock, options: { leaseClock?: Clock } = {}) {
    this.#db = db;
    this.#clock = clock;
    this.#leaseClock = new LeaseClock(options.leaseClock);
    this.#traces = new TranscriptAndTraces(db, clock, this.#leaseClock);
    this.#sessions = new SessionsAndTurns(db, clock, this.#leaseClock, this.#traces);
  }

  getSession(key: SessionKey): Promise<SessionRecord | undefined> {
    return this.#sessions.getSession(key);
  }

  getTurn(key: SessionKey, turnId: string): Promise<TurnRecord | undefined> {
    return this.#sessions.getTurn(key, turnId);
  }

  listTurns(key: SessionKey): Promise<TurnRecord[]> {
    return this.#sessions.listTurns(key);
  }

  releaseLease(key: SessionKey, owner: string): Promise<void> {
    return this.#sessions.releaseLease(key, owner);
  }

  updateTurn(input: UpdateTurnInput): Promise<boolean> {
    return this.#sessions.updateTurn(input);
  }

  changeMode(entry: ModeHistoryEntry, leaseOwner: string): Promise<boolean> {
    return this.#sessions.changeMode(entry, leaseOwner);
  }

  listModeHistory(key: SessionKey): Promise<ModeHistoryEntry[]> {
    return this.#sessions.listModeHistory(key);
  }

  findExpiredLeases(input: FindExpiredLeasesInput): Promise<SessionKey[]> {
    return this.#sessions.findExpiredLeases(input);
  }

  recordLlmCall(input: RecordLlmCallInput): Promise<boolean> {
    return this.#traces.recordLlmCall(input);
  }

  loadTranscript(key: SessionKey, length: number): Promise<TranscriptItem[]> {
    return this.#traces.loadTranscript(key, length);
  }

  listLlmCalls(key: SessionKey, turnId: string): Promise<LlmCallRecord[]> {
    return this.#traces.listLlmCalls(key, turnId);
  }

  // The lifecycle methods, from here to the end of the class (and `atRunningCap` and `commitAsynchronously`
  // below it), are used only until `readTurnState`/`applyTransition` (issue 28) replace them.

  async claimSession({ turnId, ...input }: ClaimSessionInput): Promise<ClaimSessionResult> {
    if (turnId === undefined) return this.#claim(this.#db, input);
    // The turn is read in the claim's transaction: as it is under the new lease.
    return this.#db.transaction(async (tx) => {
      const claimed = await this.#claim(tx, input);
      if (claimed.outcome !== "claimed") return claimed;
      const turn = await readTurn(tx, input.key, turnId);
      return turn === undefined ? claimed : { ...claimed, turn };
    });
  }

  /**
   * One transaction, committed asynchronously: reads the turn and the running-turn cap; when there is no such
   * turn and the cap is not reached, claims the session and starts the turn `plan` decides.
   */
  async beginTurn({
    key,
    lease,
    now,
    create,
    turnId,
    plan,
    maxRunningTurns,
  }: BeginTurnInput): Promise<BeginTurnResult> {
    return this.#db.transaction(async (tx): Promise<BeginTurnResult> => {
      const [turn, capped] = await Promise.all([
        readTurn(tx, key, turnId),
        this.#atRunningCap(tx, key, maxRunningTurns),
        commitAsynchronously(tx),
      ]);
      if (turn !== undefined) return { outcome: "turn_exists", turn };
      if (capped) return { outcome: "rate_limited" };
      const claimed = await this.#claim(tx, { key, lease, now, create });
      if (claimed.outcome !== "claimed") return claimed;
      const start = plan(claimed.session);
      if (start === undefined) return claimed;
      const inserted = await tx
        .insert(turns)
        .values(turnRow(start.turn))
        .onConflictDoNothing()
        .returning({ turnId: turns.turnId });
      // None: a turn by that id appeared since the read (a request racing this one started it).
      if (inserted.length === 0) return claimed;
      const [started] = await tx
        .update(sessions)
        .set({
          ...sessionPatchSet(start.sessionPatch),
          turnCount: sql`${sessions.turnCount} + 1`,
          updatedAt: new Date(start.turn.createdAt),
        })
        .where(keyWhere(sessions, key))
        .returning();
      if (started === undefined) throw new Error(`Session ${key.sessionId} vanished under its lease.`);
      return { outcome: "started", session: toSession(started), turn: start.turn };
    });
  }

  /**
   * One transaction, committed asynchronously: reads the turn and the running-turn cap, takes the lease when it
   * is free, and applies the patch `plan` decides to the turn as read (same status, same number of rounds).
   */
  async resumeTurn({
    key,
    lease,
    turnId,
    plan,
    maxRunningTurns,
  }: ResumeTurnInput): Promise<ResumeTurnResult> {
    return transaction(this.#db, async (tx): Promise<ResumeTurnResult> => {
      const [turn, capped] = await Promise.all([
        readTurn(tx, key, turnId),
        this.#atRunningCap(tx, key, maxRunningTurns),
        commitAsynchronously(tx),
      ]);
      if (turn === undefined) return { outcome: "not_found" };
      if (capped) return { outcome: "rate_limited", turn };
      const claimed = await this.#claim(tx, { key, lease, now: this.#clock.now() });
      if (claimed.outcome !== "claimed") return { outcome: "busy", turn };
      const { session } = claimed;
      const patch = plan(session, turn);
      // Rolled back: the lease was taken for this patch only.
      if (patch === undefined) throw new Refusal<ResumeTurnResult>({ outcome: "declined", turn });
      const [resumed] = await tx
        .update(turns)
        .set({ ...turnPatchSet(patch), updatedAt: this.#clock.now() })
        .where(
          and(
            keyWhere(turns, key),
            eq(turns.turnId, turnId),
            eq(turns.status, turn.status),
            sql`jsonb_array_length(${turns.rounds}) = ${turn.rounds.length}`,
          ),
        )
        .returning();
      if (resumed !== undefined) return { outcome: "resumed", session, turn: toTurn(resumed) };
      // The claim waited for another's commit: the lease is held, the turn moved on.
      const moved = await readTurn(tx, key, turnId);
      if (moved === undefined) throw new Error(`Turn ${turnId} vanished under its session's lease.`);
      return { outcome: "claimed", session, turn: moved };
    });
  }

  async startTurn({
    turn,
    sessionPatch,
    abandonTurnId,
    leaseOwner,
  }: StartTurnInput): Promise<"started" | "turn_exists" | "lease_lost"> {
    const startedAt = new Date(turn.createdAt);
    return transaction(this.#db, async (tx) => {
      const held = await tx
        .update(sessions)
        .set({
          ...sessionPatchSet(sessionPatch),
          turnCount: sql`${sessions.turnCount} + 1`,
          updatedAt: startedAt,
        })
        .where(and(keyWhere(sessions, turn), eq(sessions.leaseOwner, leaseOwner)))
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

  /**
   * Creates the session with the lease (`create`), or takes the lease when it is free: one upsert, which
   * Postgres decides atomically, re-checking the condition on the latest row, so of two racing claims exactly
   * one gets the row back.
   */
  async #claim(
    db: StoreDatabase | StoreTransaction,
    { key, lease, now, create }: Omit<ClaimSessionInput, "turnId">,
  ): Promise<ClaimSessionResult> {
    const leaseFree = or(isNull(sessions.leaseOwner), lte(sessions.leaseExpiresAt, this.#leaseClock.now()));
    const takeLease = { leaseOwner: lease.owner, leaseExpiresAt: this.#leaseClock.now(lease.durationMs) };
    if (create !== undefined) {
      const [row] = await db
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
    const [row] = await db
      .update(sessions)
      .set(takeLease)
      .where(and(keyWhere(sessions, key), leaseFree))
      .returning();
    if (row !== undefined) return { outcome: "claimed", session: toSession(row) };
    const [existing] = await db
      .select({ principal: sessions.principal })
      .from(sessions)
      .where(keyWhere(sessions, key))
      .limit(1);
    return existing === undefined ? { outcome: "not_found" } : { outcome: "busy" };
  }

  /**
   * Whether the principal runs `cap` turns or more by the leases' clock (no cap: never). Migration 0007's
   * `aptix_at_running_cap` counts them through `turns_running_principal_idx`, never the ended turns. Claims
   * racing in the same instant each miss the other's uncommitted lease, so the cap can be passed by the claims
   * of one principal in flight at once.
   */
  async #atRunningCap(tx: StoreTransaction, key: SessionKey, cap: number | undefined): Promise<boolean> {
    if (cap === undefined) return false;
    const result = await tx.execute(
      sql`select aptix_at_running_cap(${key.principal}, ${cap}::integer, ${this.#leaseClock.now()}) as capped`,
    );
    return rowsOf(result)[0]?.capped === true;
  }
}

async function readTurn(
  db: StoreDatabase | StoreTransaction,
  key: SessionKey,
  turnId: string,
): Promise<TurnRecord | undefined> {
  const [row] = await db
    .select()
    .from(turns)
    .where(and(keyWhere(turns, key), eq(turns.turnId, turnId)))
    .limit(1);
  return row === undefined ? undefined : toTurn(row);
}

/**
 * The claim and the start or resume commit without waiting for the disk: what they write matters to a client
 * only once the round's settlement, a synchronous commit, has flushed it with its own (docs/turn-cost.md).
 */
async function commitAsynchronously(tx: StoreTransaction): Promise<void> {
  await tx.execute(sql`set local synchronous_commit = off`);
}
