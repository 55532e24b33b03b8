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
  type SessionPatch,
  type SessionRecord,
  type SessionStore,
  type StartTurnInput,
  systemClock,
  type TranscriptItem,
  type TurnPatch,
  type TurnRecord,
  type TurnStart,
  type UpdateTurnInput,
} from "@aptix/core";
import { and, asc, eq, isNotNull, isNull, lt, lte, or, type SQL, sql } from "drizzle-orm";
import { alias, type PgColumn, type PgDatabase, type PgQueryResultHKT } from "drizzle-orm/pg-core";
import { type HeldWrite, HeldWriteStatements } from "./held-write.js";
import { KnownSessions } from "./known-sessions.js";
import { llmCalls, modeHistory, sessions, toolCatalogs, transcriptItems, turns } from "./schema.js";
import type { SqlRunner } from "./sql-runner.js";
import { TableSql } from "./table-sql.js";
import { ToolCatalogs, withTools } from "./tool-catalogs.js";

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

/** What a transaction answers: its result, or the answer of a `Refusal` that rolled it back. */
async function answeringRefusal<T>(transaction: Promise<T>): Promise<T> {
  try {
    return await transaction;
  } catch (error) {
    if (error instanceof Refusal) return error.answer as T;
    throw error;
  }
}

const sessionSql = new TableSql(sessions);
const turnSql = new TableSql(turns);

type SessionKeyColumn = keyof SessionRow & string;
type TurnColumn = keyof TurnRow & string;

/** `$1`, `$2` are a session's key in every hot statement. */
const KEY_WHERE = `"principal" = $1 and "session_id" = $2`;
/** The leases' clock: `leaseClock`'s time when the store has one (a parameter), else the database's `now()`. */
const leaseNow = (param: number) => `coalesce($${param}::timestamptz, now())`;
const leaseDeadline = (nowParam: number, msParam: number) =>
  `${leaseNow(nowParam)} + $${msParam}::double precision * interval '1 millisecond'`;

/**
 * A claim's running-turn cap, judged in the claim's own statement: a CTE `capped` of one row, `capped` true when
 * the principal `$1` runs `$capParam` turns or more by the leases' clock (a null `$capParam`: no cap). Migration
 * 0007's `aptix_at_running_cap` counts them through `turns_running_principal_idx`, never the ended turns.
 */
const cappedCte = (capParam: number, nowParam: number) =>
  `capped as (select "aptix_at_running_cap"($1, $${capParam}::integer, ${leaseNow(nowParam)}) as "capped")`;
const NOT_CAPPED = `not (select "capped" from capped)`;

const GET_TURN = `select ${turnSql.selectList} from ${turnSql.name} where ${KEY_WHERE} and "turn_id" = $3`;

/** The columns a claim creates a session with, in parameter order (`lease_expires_at` is computed). */
const CREATED_SESSION_COLUMNS = [
  "principal",
  "sessionId",
  "conversationContextId",
  "agentContextId",
  "mode",
  "cursor",
  "leaseOwner",
  "createdAt",
] as const satisfies readonly SessionKeyColumn[];
/**
 * `beginTurn`'s first statement: reads the turn `$11` and, only when there is none and the principal is below
 * the running-turn cap `$12`, claims the session, creating it with the lease (`$1`…, CREATED_SESSION_COLUMNS)
 * or taking the lease when it is free. One row: the turn's columns prefixed `turn.` (null when absent), the
 * claimed session's prefixed `session.` (null when not claimed) and `capped`.
 */
const READ_TURN_AND_CLAIM = `with existing as (
    select ${turnSql.selectListAs("turn.")} from ${turnSql.name} where ${KEY_WHERE} and "turn_id" = $11
  ), ${cappedCte(12, 9)}, claimed as (
    insert into ${sessionSql.name} (${CREATED_SESSION_COLUMNS.map((key) => sessionSql.column(key)).join(", ")}, "turn_count", "updated_at", "lease_expires_at")
    select ${CREATED_SESSION_COLUMNS.map((key, index) => sessionSql.param(key, index + 1)).join(", ")}, 0, $8::timestamptz, ${leaseDeadline(9, 10)}
    where not exists (select 1 from existing) and ${NOT_CAPPED}
    on conflict ("principal", "session_id") do update
      set "lease_owner" = excluded."lease_owner", "lease_expires_at" = excluded."lease_expires_at"
      where ${sessionSql.name}."lease_owner" is null or ${sessionSql.name}."lease_expires_at" <= ${leaseNow(9)}
    returning ${sessionSql.selectListAs("session.")}
  )
  select * from (select 1) as one left join existing on true left join claimed on true cross join capped`;

/**
 * `resumeTurn`'s first statement: reads the turn `$3` and, when there is one and the principal is below the
 * running-turn cap `$7`, takes the session's lease for `$4` when it is free. One row: the turn's columns
 * prefixed `turn.` (null when absent), the claimed session's prefixed `session.` (null when not claimed) and
 * `capped`.
 */
const READ_TURN_AND_TAKE_LEASE = `with existing as (
    select ${turnSql.selectListAs("turn.")} from ${turnSql.name} where ${KEY_WHERE} and "turn_id" = $3
  ), ${cappedCte(7, 5)}, claimed as (
    update ${sessionSql.name} set "lease_owner" = $4, "lease_expires_at" = ${leaseDeadline(5, 6)}
    where ${KEY_WHERE} and ("lease_owner" is null or "lease_expires_at" <= ${leaseNow(5)})
      and exists (select 1 from existing) and ${NOT_CAPPED}
    returning ${sessionSql.selectListAs("session.")}
  )
  select * from (select 1) as one left join existing on true left join claimed on true cross join capped`;

/** Every column of a turn, in the parameter order of START_TURN. */
const TURN_COLUMNS = [
  "principal",
  "sessionId",
  "turnId",
  "sequence",
  "status",
  "mode",
  "stream",
  "rounds",
  "pending",
  "startCursor",
  "toolExecutions",
  "files",
  "usage",
  "llmCallCount",
  "error",
  "createdAt",
  "updatedAt",
  "completedAt",
] as const satisfies readonly TurnColumn[];

/** What a started turn sets on its session row, locked by the claim of the same transaction. */
const STARTED_SESSION_COLUMNS = [
  "mode",
  "solutionContextText",
  "cursor",
  "openTurnId",
  "turnCount",
  "updatedAt",
] as const satisfies readonly SessionKeyColumn[];
/** A session's columns a turn is planned from: all but its key and its lease. */
const PLANNED_FROM_COLUMNS = [
  "conversationContextId",
  "agentContextId",
  "mode",
  "solutionContextText",
  "cursor",
  "openTurnId",
  "turnCount",
  "createdAt",
  "updatedAt",
] as const satisfies readonly SessionKeyColumn[];
const STARTED_FROM = TURN_COLUMNS.length + STARTED_SESSION_COLUMNS.length;
/**
 * Inserts the turn (`$1`…, TURN_COLUMNS) and, when it was not there yet, sets STARTED_SESSION_COLUMNS on its
 * session row (locked by the claim of the same transaction) from the parameters after them: one statement.
 */
const START_TURN = `with inserted as (${turnSql.insert(TURN_COLUMNS, "on conflict do nothing returning 1")})
  update ${sessionSql.name} set ${sessionSql.assignments(STARTED_SESSION_COLUMNS, TURN_COLUMNS.length + 1)}
  where ${KEY_WHERE} and exists (select 1 from inserted) returning 1`;

const LEASE_CLOCK_PARAM = STARTED_FROM + PLANNED_FROM_COLUMNS.length + 2;
/**
 * `beginTurn` on a session as this instance last wrote it: START_TURN's parameters, the lease's owner, the
 * values planned from (PLANNED_FROM_COLUMNS), then the lease's clock and duration and the running-turn cap.
 * One statement, on its own (no BEGIN, no COMMIT): reads the turn `$3`; when there is none, takes the lease and starts the turn on the
 * session row, only while the row still has the values planned from (compared on the row's latest version,
 * should the update wait for another's commit); then inserts the turn. It commits without waiting for the
 * disk, as LEASE_TRANSACTION does, by setting `synchronous_commit` for its own transaction. It starts nothing
 * when the principal is at the running-turn cap. One row: the turn's columns prefixed `turn.` (null when
 * absent), when it started the turn the session's as started prefixed `session.`, and `capped`.
 */
const START_WITH_CLAIM = `with existing as (
    select ${turnSql.selectListAs("turn.")} from ${turnSql.name} where ${KEY_WHERE} and "turn_id" = $3
  ), ${cappedCte(LEASE_CLOCK_PARAM + 2, LEASE_CLOCK_PARAM)}, claimed as (
    update ${sessionSql.name} set "lease_owner" = $${STARTED_FROM + 1},
      "lease_expires_at" = ${leaseDeadline(LEASE_CLOCK_PARAM, LEASE_CLOCK_PARAM + 1)},
      ${sessionSql.assignments(STARTED_SESSION_COLUMNS, TURN_COLUMNS.length + 1)}
    where ${KEY_WHERE} and ("lease_owner" is null or "lease_expires_at" <= ${leaseNow(LEASE_CLOCK_PARAM)})
      and ${sessionSql.equal(PLANNED_FROM_COLUMNS, STARTED_FROM + 2)}
      and not exists (select 1 from existing) and ${NOT_CAPPED}
    returning ${sessionSql.selectListAs("session.")}
  ), inserted as (${turnSql.insert(TURN_COLUMNS, "where exists (select 1 from claimed)")}
  ), asynchronous as (select set_config('synchronous_commit', 'off', true))
  select * from (select 1) as one left join existing on true left join claimed on true cross join capped
    cross join asynchronous`;

/**
 * `beginTurn` and `resumeTurn` commit without waiting for the disk: what they write (a lease, a started or
 * resumed turn) only matters to a client once the round's settlement, a synchronous commit, has flushed it
 * with its own. A database crash in between loses the claim and the start with the round they began, and the
 * request sent again runs it anew.
 */
const LEASE_TRANSACTION = { synchronousCommit: false } as const;

const RELEASE_LEASE = `update ${sessionSql.name} set "lease_owner" = null, "lease_expires_at" = null where ${KEY_WHERE} and "lease_owner" = $3`;
const heldWrites = new HeldWriteStatements({
  sessions: sessionSql,
  turns: turnSql,
  llmCalls: new TableSql(llmCalls),
  transcriptItems: new TableSql(transcriptItems),
  toolCatalogs: new TableSql(toolCatalogs),
});

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
 * - The running-turn cap (`maxRunningTurns`) is a CTE of the claim statements themselves (`cappedCte`): no
 *   statement more. Claims racing in the same instant each miss the other's uncommitted lease, so the cap can
 *   be passed by the claims of one principal in flight at once.
 * - Every lease-guarded write is one short transaction that starts by writing (or locking) the session row
 *   `WHERE lease_owner = $owner`: a claim racing it waits for the commit and then sees the new state. A refused
 *   step rolls the whole transaction back, so a refused write changes nothing.
 * - No transaction or pooled connection outlives a method call, and each call sends a fixed number of
 *   statements whatever the size of the session's history: only `loadTranscript` and the `list*` methods read
 *   more than one row, and `loadTranscript` reads only `position < length`. Every other read goes by a
 *   primary key: no other index starts with a session's key, so no planner, with or without statistics, can
 *   read a session's earlier turns to find one.
 * - The hot path (`getTurn`, `beginTurn`, `resumeTurn`, `updateTurn`, `recordLlmCall`, `releaseLease`) sends fixed statement
 *   texts through the driver (`SqlRunner`): postgres.js prepares each once per connection, and no SQL is built
 *   per call (a write whose columns vary uses the text built the first time that set of columns was written).
 *   The rest goes through drizzle's query builder.
 *
 * Counted with BEGIN/COMMIT: getSession, getTurn, loadTranscript, list*, findExpiredLeases, releaseLease 1;
 * claimSession 1 (2 when refused without `create`; 4 with `turnId`, a transaction reading the turn too); beginTurn 3
 * (one statement reading the turn and, when there is none, claiming the session, sent with the BEGIN; then
 * COMMIT), 4 when it starts the turn (the start sent with the COMMIT): two round trips on Postgres; 1 when
 * this instance wrote the session last (`KnownSessions`: START_WITH_CLAIM, the turn planned before the claim),
 * 1 more than the above when that statement claims nothing (busy, or the session written since); resumeTurn 4
 * likewise (the read and lease in one statement with the BEGIN, the guarded resume with the COMMIT; 3 when nothing
 * is claimed, 5 when the turn moved on and is read again); startTurn 4 (5 when abandoning a turn); updateTurn and recordLlmCall 1
 * (one statement of data-modifying CTEs, `HeldWriteStatements`, whatever calls they carry); changeMode 4.
 */
export class DrizzleSessionStore implements SessionStore {
  readonly #db: StoreDatabase;
  readonly #sql: SqlRunner;
  readonly #clock: Clock;
  readonly #leaseClock: Clock | undefined;
  readonly #catalogs = new ToolCatalogs();
  readonly #known = new KnownSessions();

  /**
   * `runner` is the driver under `db`, for the hot path's fixed statements. `clock` stamps `updatedAt` on
   * writes that are not given a time (`updateTurn`, `recordLlmCall`). `leaseClock` judges leases in place of
   * the database's `now()`: for tests that move time by hand only, as instances agree on leases only through
   * the database's clock.
   */
  constructor(
    db: StoreDatabase,
    runner: SqlRunner,
    clock: Clock = systemClock,
    options: { leaseClock?: Clock } = {},
  ) {
    this.#db = db;
    this.#sql = runner;
    this.#clock = clock;
    this.#leaseClock = options.leaseClock;
  }

  async getSession(key: SessionKey): Promise<SessionRecord | undefined> {
    const [row] = await this.#db.select().from(sessions).where(sessionWhere(key)).limit(1);
    return row === undefined ? undefined : toSession(row);
  }

  async getTurn(key: SessionKey, turnId: string): Promise<TurnRecord | undefined> {
    const [row] = await this.#sql.run(GET_TURN, [key.principal, key.sessionId, turnId]);
    return row === undefined ? undefined : toTurn(turnSql.decode(row));
  }

  async beginTurn({
    key,
    lease,
    now,
    create,
    turnId,
    plan,
    maxRunningTurns,
  }: BeginTurnInput): Promise<BeginTurnResult> {
    const cap = maxRunningTurns ?? null;
    const created: Partial<SessionRow> = {
      principal: key.principal,
      sessionId: key.sessionId,
      conversationContextId: create.conversationContextId,
      agentContextId: create.agentContextId,
      mode: create.mode,
      cursor: EMPTY_CURSOR,
      leaseOwner: lease.owner,
      createdAt: now,
    };
    const claimParams = [
      ...CREATED_SESSION_COLUMNS.map((column) => sessionSql.encode(column, created[column])),
      this.#leaseClockTime(),
      lease.durationMs,
    ];
    // Planned from the session as this instance last wrote it, the start goes with the claim: one statement.
    const known = this.#known.get(key);
    const early = known && plan(known);
    if (early) {
      const [row] = await this.#sql.run(START_WITH_CLAIM, [
        ...startParams(known, early),
        lease.owner,
        ...PLANNED_FROM_COLUMNS.map((column) => sessionSql.encode(column, known[column])),
        this.#leaseClockTime(),
        lease.durationMs,
        cap,
      ]);
      if (row?.["turn.turnId"] != null) {
        return { outcome: "turn_exists", turn: toTurn(turnSql.decode(row, "turn.")) };
      }
      if (row?.capped === true) return { outcome: "rate_limited" };
      if (row?.["session.sessionId"] != null) {
        const session = toSession(sessionSql.decode(row, "session."));
        this.#known.remember(session);
        return { outcome: "started", session, turn: early.turn };
      }
      // Busy, or written since in a way this instance does not know: claimed and planned as without it.
    }
    const begun = await this.#sql.transaction(async (run, commitWith): Promise<BeginTurnResult> => {
      // One statement, sent with the BEGIN: the turn, or else the claim.
      const [read] = await run(READ_TURN_AND_CLAIM, [...claimParams, turnId, cap]);
      if (read?.["turn.turnId"] != null) {
        return { outcome: "turn_exists", turn: toTurn(turnSql.decode(read, "turn.")) };
      }
      if (read?.capped === true) return { outcome: "rate_limited" };
      if (read?.["session.sessionId"] == null) return { outcome: "busy" };
      const session = toSession(sessionSql.decode(read, "session."));
      const start = plan(session);
      if (start === undefined) return { outcome: "claimed", session };
      const written = await commitWith(START_TURN, startParams(session, start));
      // No row: a turn by that id appeared since the first read (a request racing this one started it).
      if (written.length === 0) return { outcome: "claimed", session };
      return { outcome: "started", session: startedSession(session, start), turn: start.turn };
    }, LEASE_TRANSACTION);
    if (begun.outcome === "started") this.#known.remember(begun.session);
    else if (begun.outcome === "busy") this.#known.forget(key);
    return begun;
  }

  async resumeTurn({
    key,
    lease,
    turnId,
    plan,
    maxRunningTurns,
  }: ResumeTurnInput): Promise<ResumeTurnResult> {
    const params = [
      key.principal,
      key.sessionId,
      turnId,
      lease.owner,
      this.#leaseClockTime(),
      lease.durationMs,
      maxRunningTurns ?? null,
    ];
    return answeringRefusal(
      this.#sql.transaction(async (run, commitWith): Promise<ResumeTurnResult> => {
        // One statement, sent with the BEGIN: the turn and, when there is one, the lease.
        const [read] = await run(READ_TURN_AND_TAKE_LEASE, params);
        if (read?.["turn.turnId"] == null) return { outcome: "not_found" };
        const turn = toTurn(turnSql.decode(read, "turn."));
        if (read.capped === true) return { outcome: "rate_limited", turn };
        if (read["session.sessionId"] == null) return { outcome: "busy", turn };
        const session = toSession(sessionSql.decode(read, "session."));
        const patch = plan(session, turn);
        // Rolled back: the lease was taken for this patch only.
        if (patch === undefined) throw new Refusal<ResumeTurnResult>({ outcome: "declined", turn });
        const updatedAt = this.#clock.now();
        const set = { ...turnPatchSet(patch), updatedAt };
        const columns = Object.keys(set) as TurnColumn[];
        const guarded = resumeStatement(columns);
        const written = await commitWith(guarded, [
          key.principal,
          key.sessionId,
          turnId,
          turn.status,
          turn.rounds.length,
          ...columns.map((column) => turnSql.encode(column, set[column as keyof typeof set])),
        ]);
        if (written.length === 1) {
          const patched = Object.entries(patch).filter(([, value]) => value !== undefined);
          this.#known.remember(session);
          return {
            outcome: "resumed",
            session,
            turn: { ...turn, ...Object.fromEntries(patched), updatedAt },
          };
        }
        // The statement's snapshot predates a write the claim waited for: the lease is held, the turn moved on.
        const moved = await this.getTurn(key, turnId);
        if (moved === undefined) throw new Error(`Turn ${turnId} vanished under its session's lease.`);
        return { outcome: "claimed", session, turn: moved };
      }, LEASE_TRANSACTION),
    );
  }

  async claimSession({ turnId, ...input }: ClaimSessionInput): Promise<ClaimSessionResult> {
    if (turnId === undefined) return this.#claim(this.#db, input);
    // The turn is read in the claim's transaction: as it is under the new lease.
    return this.#db.transaction(async (tx) => {
      const claimed = await this.#claim(tx, input);
      if (claimed.outcome !== "claimed") return claimed;
      const [row] = await tx
        .select()
        .from(turns)
        .where(and(keyWhere(turns, input.key), eq(turns.turnId, turnId)))
        .limit(1);
      return row === undefined ? claimed : { ...claimed, turn: toTurn(row) };
    });
  }

  async #claim(
    db: StoreDatabase | StoreTransaction,
    { key, lease, now, create }: Omit<ClaimSessionInput, "turnId">,
  ): Promise<ClaimSessionResult> {
    const leaseFree = or(isNull(sessions.leaseOwner), lte(sessions.leaseExpiresAt, this.#leaseNow()));
    const takeLease = { leaseOwner: lease.owner, leaseExpiresAt: this.#leaseNow(lease.durationMs) };
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
      .where(and(sessionWhere(key), leaseFree))
      .returning();
    if (row !== undefined) return { outcome: "claimed", session: toSession(row) };
    const [existing] = await db
      .select({ principal: sessions.principal })
      .from(sessions)
      .where(sessionWhere(key))
      .limit(1);
    return existing === undefined ? { outcome: "not_found" } : { outcome: "busy" };
  }

  async releaseLease(key: SessionKey, owner: string): Promise<void> {
    await this.#sql.run(RELEASE_LEASE, [key.principal, key.sessionId, owner]);
  }

  async startTurn({
    turn,
    sessionPatch,
    abandonTurnId,
    leaseOwner,
  }: StartTurnInput): Promise<"started" | "turn_exists" | "lease_lost"> {
    const startedAt = new Date(turn.createdAt);
    this.#known.forget(turn);
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
    llmCalls: calls = [],
  }: UpdateTurnInput): Promise<boolean> {
    const now = this.#clock.now();
    // The calls' progress first, then the patch: a failed turn's restored cursor wins over its calls'.
    const set: Partial<SessionRow> = {};
    const progressed = calls.findLast((write) => write.progress !== undefined)?.progress;
    if (progressed !== undefined) Object.assign(set, { cursor: progressed.cursor, updatedAt: now });
    if (sessionPatch !== undefined) Object.assign(set, sessionPatchSet(sessionPatch), { updatedAt: now });
    const catalogs = new Map<string, string>();
    return this.#heldWrite({
      key,
      owner: leaseOwner,
      session: { set, release: releaseLease === true },
      turn: {
        turnId,
        set: { ...turnPatchSet(turnPatch), updatedAt: now },
        ...(expectStatus === undefined ? {} : { expectStatus }),
      },
      calls: calls.map(({ call, progress }) => ({ row: this.#callRow(call, catalogs), progress })),
      catalogs,
    });
  }

  async recordLlmCall({ call, progress, lease }: RecordLlmCallInput): Promise<boolean> {
    const catalogs = new Map<string, string>();
    return this.#heldWrite({
      key: { principal: call.principal, sessionId: call.sessionId },
      owner: lease.owner,
      session: {
        set: progress === undefined ? {} : { cursor: progress.cursor, updatedAt: this.#clock.now() },
        renew: { leaseClock: this.#leaseClockTime(), durationMs: lease.durationMs },
        release: false,
      },
      calls: [{ row: this.#callRow(call, catalogs), progress }],
      catalogs,
    });
  }

  async #heldWrite(write: HeldWrite): Promise<boolean> {
    const { text, params } = heldWrites.statement(write);
    const [row] = await this.#sql.run(text, params);
    const held = row?.held === 1;
    if (held) {
      this.#catalogs.stored(write.catalogs.keys());
      this.#known.update(write.key, write.session.set as Partial<SessionRecord>);
    } else this.#known.forget(write.key);
    return held;
  }

  /** A call's row, its tool catalogs taken out; those not known stored go to `catalogs`. */
  #callRow(call: LlmCallRecord, catalogs: Map<string, string>): typeof llmCalls.$inferInsert {
    const request = this.#catalogs.split(call.request, catalogs);
    const providerRequest = this.#catalogs.split(call.providerRequest ?? null, catalogs);
    return {
      principal: call.principal,
      sessionId: call.sessionId,
      turnId: call.turnId,
      callIndex: call.index,
      request: request.payload as LlmCallRow["request"],
      response: call.response,
      // jsonb has no `undefined`: an absent raw payload is kept as null.
      providerRequest: providerRequest.payload,
      providerResponse: call.providerResponse ?? null,
      requestTools: request.digest,
      providerRequestTools: providerRequest.digest,
      error: call.error,
      startedAt: new Date(call.startedAt),
      durationMs: call.durationMs,
    };
  }

  async changeMode(entry: ModeHistoryEntry, leaseOwner: string): Promise<boolean> {
    this.#known.forget(entry);
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
    const requestTools = alias(toolCatalogs, "request_tools");
    const providerTools = alias(toolCatalogs, "provider_request_tools");
    const rows = await this.#db
      .select({ call: llmCalls, requestTools: requestTools.tools, providerTools: providerTools.tools })
      .from(llmCalls)
      .leftJoin(requestTools, eq(requestTools.digest, llmCalls.requestTools))
      .leftJoin(providerTools, eq(providerTools.digest, llmCalls.providerRequestTools))
      .where(and(keyWhere(llmCalls, key), eq(llmCalls.turnId, turnId)))
      .orderBy(asc(llmCalls.callIndex));
    return rows.map(({ call, requestTools, providerTools }) =>
      toLlmCall({
        ...call,
        request: withTools(call.request, requestTools) as LlmCallRow["request"],
        providerRequest: withTools(call.providerRequest, providerTools),
      }),
    );
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

  /** The leases' clock for a hot statement: `leaseClock`'s time, or null for the database's `now()`. */
  #leaseClockTime(): string | null {
    return this.#leaseClock?.now().toISOString() ?? null;
  }

  /** Runs `work` in one transaction; a `Refusal` thrown inside rolls it back and becomes the answer. */
  #transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return answeringRefusal(this.#db.transaction(work));
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

/** `resumeTurn`'s guarded patch of the columns `columns`, built once per set of columns. */
const resumeStatements = new Map<string, string>();
function resumeStatement(columns: readonly TurnColumn[]): string {
  const shape = columns.join(",");
  let text = resumeStatements.get(shape);
  if (text === undefined) {
    // Applied only to the turn as read: same status, same number of rounds.
    text = `update ${turnSql.name} set ${turnSql.assignments(columns, 6)}
      where ${KEY_WHERE} and "turn_id" = $3 and "status" = $4 and jsonb_array_length("rounds") = $5 returning 1`;
    resumeStatements.set(shape, text);
  }
  return text;
}

/** The session as `start` leaves it. */
function startedSession(session: SessionRecord, start: TurnStart): SessionRecord {
  return {
    ...session,
    ...sessionPatchSet(start.sessionPatch),
    turnCount: session.turnCount + 1,
    updatedAt: new Date(start.turn.createdAt),
  };
}

/** START_TURN's parameters: `start`, planned from `session`. */
function startParams(session: SessionRecord, start: TurnStart): unknown[] {
  const row = turnRow(start.turn);
  const after = startedSession(session, start);
  return [
    ...TURN_COLUMNS.map((column) => turnSql.encode(column, row[column])),
    ...STARTED_SESSION_COLUMNS.map((column) => sessionSql.encode(column, after[column])),
  ];
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
