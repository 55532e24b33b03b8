import {
  EMPTY_CURSOR,
  type SessionKey,
  type TransitionResult,
  type TransitionWrite,
  type TurnRecord,
  type TurnState,
} from "@aptix/core";
import { and, eq, exists, isNull, lte, or, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { sessions, turns } from "../schema.js";
import { type LeaseClock, whileLeaseHeld } from "./lease.js";
import {
  isUniqueViolation,
  keyOf,
  modeHistoryJson,
  modeHistoryWrite,
  type Placeholders,
  PreparedShapes,
  parts,
  placeholders,
  rowsJson,
  rowsWhere,
  type StoreDatabase,
  sessionPatchSet,
  toSession,
  toTurn,
  turnPatchSet,
  turnRow,
  type Write,
} from "./rows.js";
import type { TranscriptAndTraces } from "./transcript-and-traces.js";

/**
 * The sessions-and-turns domain's transitions (`SessionStore.readTurnState`, `applyTransition`), on drizzle's
 * query builder:
 *
 * - `readTurnState` is one prepared statement: the session row, joined to the turn the request names and to its
 *   open turn (primary-key lookups only, so the rows read stay flat in the session's length).
 * - `applyTransition` is one statement, atomic without a transaction: first the session row, written only while
 *   its lease is free (or expired by the leases' clock), its `version` the one read and, when `maxRunningTurns`
 *   is given, the principal below the cap (migration 0007's `aptix_at_running_cap`); or, for a new session,
 *   inserted with `ON CONFLICT DO NOTHING`. Then, each only when that row was written, the turn insert, the
 *   turn patches and the mode history row. Every write of a session's turns bumps the session's version, so a
 *   version that matched means the turns are as read; a turn insert that conflicts anyway fails the statement
 *   and answers stale. When the session row was not written, one select tells rate_limited from busy from
 *   stale. Statements are built once per shape (`PreparedShapes`).
 * - A lease-guarded transition (`whileLeaseHeld`, a running turn's settlement) is one statement too
 *   (`whileLeaseHeld` in lease.ts): the session row written while the owner holds its lease and every turn to
 *   patch exists, then the turn patches and the LLM calls it carries (`TranscriptAndTraces.callWrites`). It
 *   waits for the disk: a client is answered from it.
 */
export class TurnTransitions {
  readonly #db: StoreDatabase;
  readonly #leaseClock: LeaseClock;
  readonly #traces: TranscriptAndTraces;
  readonly #read;
  readonly #shapes = new PreparedShapes();

  /** `traces` keeps the LLM calls a lease-guarded transition carries. */
  constructor(db: StoreDatabase, leaseClock: LeaseClock, traces: TranscriptAndTraces) {
    this.#db = db;
    this.#leaseClock = leaseClock;
    this.#traces = traces;
    // Each turn is one primary-key lookup. The open turn is a lateral subquery, its `limit` keeping the planner
    // from flattening it into a join that could hash the session's every turn.
    const named = alias(turns, "named_turn");
    const open = db
      .select()
      .from(turns)
      .where(
        and(
          eq(turns.principal, sessions.principal),
          eq(turns.sessionId, sessions.sessionId),
          eq(turns.turnId, sessions.openTurnId),
        ),
      )
      .limit(1)
      .as("open_turn");
    this.#read = db
      .select()
      .from(sessions)
      .leftJoin(
        named,
        and(
          eq(named.principal, sessions.principal),
          eq(named.sessionId, sessions.sessionId),
          eq(named.turnId, sql.placeholder("turnId")),
        ),
      )
      .leftJoinLateral(open, sql`true`)
      .where(
        and(
          eq(sessions.principal, sql.placeholder("principal")),
          eq(sessions.sessionId, sql.placeholder("sessionId")),
        ),
      )
      .prepare("aptix_read_turn_state");
  }

  async readTurnState(key: SessionKey, turnId: string): Promise<TurnState> {
    const [row] = await this.#read.execute({ ...key, turnId });
    if (row === undefined) return {};
    const { sessions: session, named_turn: turn, open_turn: openTurn } = row;
    return {
      session: toSession(session),
      ...(turn ? { turn: toTurn(turn) } : {}),
      ...(openTurn && openTurn.turnId !== turnId ? { openTurn: toTurn(openTurn) } : {}),
    };
  }

  async applyTransition(write: TransitionWrite): Promise<TransitionResult> {
    if (write.whileLeaseHeld === true) return this.#writeWhileLeaseHeld(write);
    const { key, lease, now, expectVersion, insertTurn, turnPatches = [], modeChange } = write;
    const capping = write.maxRunningTurns !== undefined;
    const judged = { ...keyOf(key), maxRunningTurns: write.maxRunningTurns, ...this.#leaseClock.values() };
    if (expectVersion === undefined && write.create === undefined) return { outcome: "stale" };
    const session = placeholders(
      sessions,
      "session_",
      expectVersion === undefined ? {} : this.#sessionColumns(write),
    );
    const patches = turnPatchParts(turnPatches, now);
    const shape = {
      creates: expectVersion === undefined,
      claims: write.releaseLease !== true,
      capping,
      overridesLease: write.overrideLease === true,
      insertsTurn: insertTurn !== undefined,
      changesMode: modeChange !== undefined,
    };
    let row: typeof sessions.$inferSelect | undefined;
    try {
      [row] = await this.#shapes.send(
        [...Object.values(shape), session.shape, ...patches.parts.map((patch) => patch.shape)].join("/"),
        () => this.#statement(shape, session, patches.parts),
        {
          ...judged,
          expectVersion,
          leaseMs: lease.durationMs,
          ...session.values,
          ...(expectVersion === undefined ? { session: rowsJson(sessions, [this.#newSession(write)]) } : {}),
          ...(insertTurn === undefined
            ? {}
            : { turn: rowsJson(turns, [turnRow(insertTurn)]), ...listedOf(insertTurn) }),
          ...patches.values,
          ...(modeChange === undefined ? {} : { modeChange: modeHistoryJson(modeChange) }),
        },
      );
    } catch (error) {
      // The turn to insert exists: what was read is out of date.
      if (isUniqueViolation(error)) return { outcome: "stale" };
      throw error;
    }
    if (row !== undefined) return { outcome: "applied", session: toSession(row) };
    // Taking the lease whoever holds it, only the version can have stopped it.
    if (shape.overridesLease) return { outcome: "stale" };
    // Why the session row was not written: the cap first, then a held lease, else the session moved on.
    const why = await this.#judge(capping ? "why_not_capped" : "why_not", judged);
    return { outcome: why.capped ? "rate_limited" : why.held ? "busy" : "stale" };
  }

  async #writeWhileLeaseHeld({
    key,
    lease,
    now,
    turnPatches = [],
    sessionPatch,
    releaseLease,
    llmCalls = [],
  }: TransitionWrite): Promise<TransitionResult> {
    // The calls' progress first, then the patch: a failed turn's restored cursor wins over its calls'.
    const sessionSet: Partial<typeof sessions.$inferInsert> = {};
    const progressed = llmCalls.findLast((write) => write.progress !== undefined)?.progress;
    if (progressed !== undefined) Object.assign(sessionSet, { cursor: progressed.cursor, updatedAt: now });
    if (sessionPatch !== undefined)
      Object.assign(sessionSet, sessionPatchSet(sessionPatch), { updatedAt: now });
    if (releaseLease === true) Object.assign(sessionSet, { leaseOwner: null, leaseExpiresAt: null });
    const session = placeholders(sessions, "session_", sessionSet);
    const patches = turnPatchParts(turnPatches, now);
    const calls = this.#traces.callWrites(llmCalls);
    const [row] = await this.#shapes.send(
      ["held", session.shape, ...patches.parts.map((patch) => patch.shape), calls.shape].join("/"),
      () => {
        const db = this.#db;
        const patchedExist = patches.parts.map((_, index) =>
          exists(db.select({ turnId: turns.turnId }).from(turns).where(patchedTurn(index))),
        );
        return whileLeaseHeld(db, { set: session.set, also: and(...patchedExist) }, (held) => [
          ...patches.parts.map((patch, index) => turnPatchWrite(db, patch, index, held)),
          ...calls.writes(held),
        ]);
      },
      {
        ...keyOf(key),
        owner: lease.owner,
        ...session.values,
        ...patches.values,
        ...calls.values,
      },
    );
    if (row === undefined) return { outcome: "stale" };
    calls.committed();
    return { outcome: "applied", session: toSession(row) };
  }

  /** The columns an existing session row's write sets from values (the lease's deadline and counters are SQL). */
  #sessionColumns({ lease, now, insertTurn, sessionPatch, modeChange, releaseLease }: TransitionWrite) {
    const changes = insertTurn !== undefined || sessionPatch !== undefined || modeChange !== undefined;
    return {
      leaseOwner: releaseLease === true ? null : lease.owner,
      ...(sessionPatch === undefined ? {} : sessionPatchSet(sessionPatch)),
      ...(changes ? { updatedAt: now } : {}),
    };
  }

  /** A new session's row, but for its lease's deadline (SQL). */
  #newSession({ key, lease, now, create, insertTurn, sessionPatch, releaseLease }: TransitionWrite) {
    return {
      ...key,
      ...(create as NonNullable<TransitionWrite["create"]>),
      solutionContextText: null,
      cursor: EMPTY_CURSOR,
      openTurnId: null,
      ...(sessionPatch === undefined ? {} : sessionPatchSet(sessionPatch)),
      turnCount: insertTurn === undefined ? 0 : 1,
      ...(insertTurn === undefined ? {} : listedOf(insertTurn)),
      version: 1,
      leaseOwner: releaseLease === true ? null : lease.owner,
      createdAt: now,
      updatedAt: now,
    };
  }

  /**
   * The transition as one statement (atomic without a transaction): first the session row's write, returning
   * it; then the turn insert, the turn patches and the mode history row, each only when that write was made.
   */
  #statement(
    shape: {
      creates: boolean;
      claims: boolean;
      capping: boolean;
      overridesLease: boolean;
      insertsTurn: boolean;
      changesMode: boolean;
    },
    session: Placeholders,
    patches: readonly Placeholders[],
  ) {
    const db = this.#db;
    const deadline = shape.claims ? this.#leaseClock.now("leaseMs") : null;
    const claim = db.$with("claimed").as(
      shape.creates
        ? db
            .insert(sessions)
            .select(
              rowsWhere(sessions, "session", shape.capping ? sql`not ${this.#capped()}` : sql`true`, {
                leaseExpiresAt: deadline ?? sql`null`,
              }),
            )
            .onConflictDoNothing()
            .returning()
        : db
            .update(sessions)
            .set({
              ...session.set,
              leaseExpiresAt: deadline,
              ...(shape.insertsTurn
                ? {
                    turnCount: sql`${sessions.turnCount} + 1`,
                    // The first instruction stays; the latest workspace named replaces the one before.
                    firstInstruction: sql`coalesce(${sessions.firstInstruction}, ${sql.placeholder("firstInstruction")}::text)`,
                    workspaceId: sql`coalesce(${sql.placeholder("workspaceId")}::text, ${sessions.workspaceId})`,
                  }
                : {}),
              version: sql`${sessions.version} + 1`,
            })
            .where(
              and(
                eq(sessions.principal, sql.placeholder("principal")),
                eq(sessions.sessionId, sql.placeholder("sessionId")),
                eq(sessions.version, sql.placeholder("expectVersion")),
                shape.overridesLease
                  ? undefined
                  : or(isNull(sessions.leaseOwner), lte(sessions.leaseExpiresAt, this.#leaseClock.now())),
                shape.capping ? sql`not ${this.#capped()}` : undefined,
              ),
            )
            .returning(),
    );
    const claimed = sql`exists (select from ${claim})`;
    const writes: Write[] = [
      ...(shape.insertsTurn
        ? [
            db
              .insert(turns)
              .select(rowsWhere(turns, "turn", claimed))
              .returning({ turnId: turns.turnId }),
          ]
        : []),
      ...patches.map((patch, index) => turnPatchWrite(db, patch, index, claimed)),
      ...(shape.changesMode ? [modeHistoryWrite(db, "modeChange", claimed)] : []),
    ];
    // It commits without waiting for the disk (`synchronous_commit` off for its own transaction, set as its row
    // is read): what it writes matters to a client only once the round's settlement, which waits, has flushed it
    // with its own. A database crash in between loses the transition with the round, and the request sent again
    // runs anew.
    return db
      .with(claim, ...parts(db, writes))
      .select()
      .from(claim)
      .where(sql`set_config('synchronous_commit', 'off', true) is not null`);
  }

  /** Whether the principal runs `maxRunningTurns` turns already (migration 0007's `aptix_at_running_cap`). */
  #capped(): SQL {
    return sql`"aptix_at_running_cap"(${sql.placeholder("principal")}, ${sql.placeholder("maxRunningTurns")}::integer, ${this.#leaseClock.now()})`;
  }

  /** The cap (when `judgement` names it) and whether the session's lease is held, as the store sees them now. */
  async #judge(
    judgement: "why_not" | "why_not_capped",
    values: Record<string, unknown>,
  ): Promise<{ capped: boolean; held: boolean }> {
    const [row] = await this.#shapes.send(
      judgement,
      () =>
        this.#db
          .select({
            capped: judgement === "why_not" ? sql<boolean>`false` : sql<boolean>`${this.#capped()}`,
            held: sql<boolean>`${sessions.leaseOwner} is not null and ${sessions.leaseExpiresAt} > ${this.#leaseClock.now()}`,
          })
          .from(sql`(select 1) as one`)
          .leftJoin(
            sessions,
            and(
              eq(sessions.principal, sql.placeholder("principal")),
              eq(sessions.sessionId, sql.placeholder("sessionId")),
            ),
          ),
      values,
    );
    return { capped: row?.capped === true, held: row?.held === true };
  }
}

/**
 * A transition's turn patches as placeholders (prefixed `patch<i>_`), stamped `now`, and the values of their
 * statement, each turn's id among them (`patch<i>TurnId`).
 */
function turnPatchParts(
  turnPatches: NonNullable<TransitionWrite["turnPatches"]>,
  now: Date,
): { parts: Placeholders[]; values: Record<string, unknown> } {
  const parts = turnPatches.map(({ patch }, index) =>
    placeholders(turns, `patch${index}_`, { ...turnPatchSet(patch), updatedAt: now }),
  );
  const ids = turnPatches.map(({ turnId }, index) => ({ [`patch${index}TurnId`]: turnId }));
  return { parts, values: Object.assign({}, ...parts.map((part) => part.values), ...ids) };
}

/** The turn the `index`th patch of a transition names, by its key. */
function patchedTurn(index: number): SQL | undefined {
  return and(
    eq(turns.principal, sql.placeholder("principal")),
    eq(turns.sessionId, sql.placeholder("sessionId")),
    eq(turns.turnId, sql.placeholder(`patch${index}TurnId`)),
  );
}

/** The `index`th patch of a transition, written only where `guard` holds. */
function turnPatchWrite(db: StoreDatabase, patch: Placeholders, index: number, guard: SQL) {
  return db
    .update(turns)
    .set(patch.set)
    .where(and(patchedTurn(index), guard))
    .returning({ turnId: turns.turnId });
}

/** What the session list shows of a user turn as it starts (`sessions.first_instruction`, `workspace_id`). */
function listedOf(turn: TurnRecord): { firstInstruction: string | null; workspaceId: string | null } {
  // A turn inserted is a user turn: its first round's request names these when it has them.
  const request = turn.rounds[0]?.request as { instruction?: string; workspaceId?: string } | undefined;
  const cut = request?.instruction?.slice(0, 256);
  return {
    // Never half a surrogate pair, which Postgres would refuse.
    firstInstruction: cut === undefined ? null : cut.replace(/[\uD800-\uDBFF]$/, ""),
    workspaceId: request?.workspaceId ?? null,
  };
}
