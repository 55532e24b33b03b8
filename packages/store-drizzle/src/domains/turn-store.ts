import {
  type Clock,
  EMPTY_CURSOR,
  type FindExpiredLeasesInput,
  type ModeHistoryEntry,
  type RecordLlmCallInput,
  type SessionKey,
  type TurnKey,
  type TurnRecord,
  type TurnState,
  type TurnStore,
  type TurnWrite,
  type TurnWriteResult,
} from "@aptix/core";
import {
  and,
  asc,
  eq,
  exists,
  getTableColumns,
  isNotNull,
  isNull,
  lte,
  or,
  type SQL,
  sql,
} from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { sessions, turns } from "../schema.js";
import { type LeaseClock, whileLeaseHeld } from "./lease.js";
import type { LlmCallWrites } from "./llm-call-writes.js";
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
import { webhookValues, webhookWrite } from "./webhook-outbox.js";

type LeaseGuarded = Extract<TurnWrite, { guard: "lease" }>;

/** A session's key as placeholders, for prepared statements. */
const principal = sql.placeholder("principal");
const sessionId = sql.placeholder("sessionId");

function prepared(db: StoreDatabase) {
  return {
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
  };
}

/**
 * Turns and the session's lease (`TurnStore`), on drizzle's query builder. Every lease-guarded write is one
 * statement whose first part writes the session row (bumping its `version`) while the lease is held, its other
 * parts writing only then (`whileLeaseHeld` in lease.ts), so a claim racing it waits for its commit; each call
 * sends a fixed number of statements whatever the session's length:
 *
 * - `readTurnState` is one prepared statement: the session row, joined to the turn the request names and to its
 *   open turn (primary-key lookups only, so the rows read stay flat in the session's length), and to its first
 *   queued turn with how many are queued (migration 0015's partial index of queued turns: none read when none
 *   waits).
 * - `write` (a claim) is one statement, atomic without a transaction: first the session row, written only while
 *   its lease is free (or expired by the leases' clock), its `version` the one read and, when `maxRunningTurns`
 *   is given, the principal below the cap (migration 0007's `aptix_at_running_cap`); or, for a new session,
 *   inserted with `ON CONFLICT DO NOTHING`. Then, each only when that row was written, the turn insert, the
 *   turn patches and the mode history row. Every write of a session's turns bumps the session's version, so a
 *   version that matched means the turns are as read; a turn insert that conflicts anyway fails the statement
 *   and answers stale. When the session row was not written, one select tells rate_limited from busy from
 *   stale. Statements are built once per shape (`PreparedShapes`). A `queue` write is the same statement without
 *   the lease: its session row is written while the version is the one read, whoever holds the lease.
 * - A write guarded by the lease (a running turn's settlement) is one statement too: the session row written
 *   while the owner holds its lease and every turn to patch exists, then the turn patches and the LLM calls it
 *   carries (`LlmCallWrites`). It waits for the disk: a client is answered from it.
 */
export class DrizzleTurnStore implements TurnStore {
  readonly #db: StoreDatabase;
  readonly #clock: Clock;
  readonly #leaseClock: LeaseClock;
  readonly #calls: LlmCallWrites;
  readonly #prepared: ReturnType<typeof prepared>;
  readonly #read;
  readonly #shapes = new PreparedShapes();

  /**
   * `clock` stamps `updatedAt` on writes that are not given a time (`recordLlmCall`); `calls` keeps the LLM
   * calls a write carries.
   */
  constructor(db: StoreDatabase, clock: Clock, leaseClock: LeaseClock, calls: LlmCallWrites) {
    this.#db = db;
    this.#clock = clock;
    this.#leaseClock = leaseClock;
    this.#calls = calls;
    this.#prepared = prepared(db);
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
    // The session's first queued turn, with how many are queued (counted before the limit), from the partial
    // index of queued turns: none read when none waits.
    const queued = db
      .select({
        ...getTableColumns(turns),
        queuedCount: sql<number>`(count(*) over ())::int`.as("queued_count"),
      })
      .from(turns)
      .where(
        and(
          eq(turns.principal, sessions.principal),
          eq(turns.sessionId, sessions.sessionId),
          eq(turns.status, "queued"),
        ),
      )
      .orderBy(asc(turns.sequence))
      .limit(1)
      .as("queued_turn");
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
      .leftJoinLateral(queued, sql`true`)
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
    const { sessions: session, named_turn: turn, open_turn: openTurn, queued_turn: queued } = row;
    return {
      session: toSession(session),
      ...(turn ? { turn: toTurn(turn) } : {}),
      ...(openTurn && openTurn.turnId !== turnId ? { openTurn: toTurn(openTurn) } : {}),
      ...(queued ? { queued: { count: queued.queuedCount, next: toTurn(queued) } } : {}),
    };
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

  async releaseLease(key: SessionKey, owner: string): Promise<void> {
    await this.#prepared.releaseLease.execute({ ...keyOf(key), owner });
  }

  /** One statement: renews the lease (the write's guard), and writes the call, its catalogs and its transcript. */
  async recordLlmCall({ lease, webhooks, ...write }: RecordLlmCallInput): Promise<boolean> {
    const { call, progress } = write;
    const events = webhookValues(webhooks);
    const session = placeholders(
      sessions,
      "session_",
      progress === undefined ? {} : { cursor: progress.cursor, updatedAt: this.#clock.now() },
    );
    const calls = this.#calls.callWrites([write]);
    const rows = await this.#shapes.send(
      `${session.shape}/${calls.shape}/${events.shape}`,
      () =>
        whileLeaseHeld(
          this.#db,
          { set: { ...session.set, leaseExpiresAt: this.#leaseClock.now("leaseMs") } },
          (held) => [...calls.writes(held), ...this.#webhookWrites(events, held)],
        ),
      {
        ...keyOf(call),
        owner: lease.owner,
        leaseMs: lease.durationMs,
        ...this.#leaseClock.values(),
        ...session.values,
        ...calls.values,
        ...events.values,
      },
    );
    if (rows.length > 0) calls.committed();
    return rows.length > 0;
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

  async findStartableQueued(limit: number): Promise<TurnKey[]> {
    const count = Math.ceil(limit);
    if (!(count > 0)) return [];
    return this.#shapes.send(
      "find_startable_queued",
      // From the queued turns (a partial index holds them alone) to their sessions, the first of each session.
      () =>
        this.#db
          .selectDistinctOn([turns.principal, turns.sessionId], {
            principal: turns.principal,
            sessionId: turns.sessionId,
            turnId: turns.turnId,
          })
          .from(turns)
          .innerJoin(
            sessions,
            and(eq(sessions.principal, turns.principal), eq(sessions.sessionId, turns.sessionId)),
          )
          .where(and(eq(turns.status, "queued"), isNull(sessions.openTurnId)))
          .orderBy(asc(turns.principal), asc(turns.sessionId), asc(turns.sequence))
          .limit(sql.placeholder("limit")),
      { limit: count },
    );
  }

  async write(write: TurnWrite): Promise<TurnWriteResult> {
    if (write.guard === "lease") return this.#writeWhileLeaseHeld(write);
    const claim = write.guard === "override" || write.guard === "queue" ? undefined : write;
    const { key, now, turnPatches = [] } = write;
    const insertTurn = write.guard === "queue" ? write.insertTurn : claim?.insertTurn;
    const modeChange = claim?.modeChange;
    const expectVersion = write.guard === "create" ? undefined : write.expectVersion;
    const capping = claim?.maxRunningTurns !== undefined;
    const judged = { ...keyOf(key), maxRunningTurns: claim?.maxRunningTurns, ...this.#leaseClock.values() };
    const session = placeholders(sessions, "session_", write.guard === "create" ? {} : sessionColumns(write));
    const patches = turnPatchParts(turnPatches, now);
    const events = webhookValues(write.webhooks);
    const shape = {
      creates: write.guard === "create",
      // An override gives the lease back in the same step.
      claims: claim !== undefined && claim.releaseLease !== true,
      capping,
      overridesLease: write.guard === "override",
      keepsLease: write.guard === "queue",
      insertsTurn: insertTurn !== undefined,
      changesMode: modeChange !== undefined,
      tellsWebhooks: events.shape !== "",
    };
    let row: typeof sessions.$inferSelect | undefined;
    try {
      [row] = await this.#shapes.send(
        [...Object.values(shape), session.shape, ...patches.parts.map((patch) => patch.shape)].join("/"),
        () => this.#statement(shape, session, patches.parts),
        {
          ...judged,
          expectVersion,
          leaseMs: claim?.lease.durationMs,
          ...session.values,
          ...(write.guard === "create" ? { session: rowsJson(sessions, [newSession(write)]) } : {}),
          ...(insertTurn === undefined
            ? {}
            : { turn: rowsJson(turns, [turnRow(insertTurn)]), ...listedOf(insertTurn) }),
          ...patches.values,
          ...(modeChange === undefined ? {} : { modeChange: modeHistoryJson(modeChange) }),
          ...events.values,
        },
      );
    } catch (error) {
      // The turn to insert exists: what was read is out of date.
      if (isUniqueViolation(error)) return { outcome: "stale" };
      throw error;
    }
    if (row !== undefined) return { outcome: "applied", session: toSession(row) };
    // Taking the lease whoever holds it, or leaving it alone, only the version can have stopped it.
    if (shape.overridesLease || shape.keepsLease) return { outcome: "stale" };
    // Why the session row was not written: the cap first, then a held lease, else the session moved on.
    const why = await this.#judge(capping ? "why_not_capped" : "why_not", judged);
    return { outcome: why.capped ? "rate_limited" : why.held ? "busy" : "stale" };
  }

  async #writeWhileLeaseHeld({
    key,
    owner,
    now,
    turnPatches = [],
    sessionPatch,
    releaseLease,
    llmCalls = [],
    webhooks,
  }: LeaseGuarded): Promise<TurnWriteResult> {
    // The calls' progress first, then the patch: a failed turn's restored cursor wins over its calls'.
    const sessionSet: Partial<typeof sessions.$inferInsert> = {};
    const progressed = llmCalls.findLast((write) => write.progress !== undefined)?.progress;
    if (progressed !== undefined) Object.assign(sessionSet, { cursor: progressed.cursor, updatedAt: now });
    if (sessionPatch !== undefined)
      Object.assign(sessionSet, sessionPatchSet(sessionPatch), { updatedAt: now });
    if (releaseLease === true) Object.assign(sessionSet, { leaseOwner: null, leaseExpiresAt: null });
    const session = placeholders(sessions, "session_", sessionSet);
    const patches = turnPatchParts(turnPatches, now);
    const calls = this.#calls.callWrites(llmCalls);
    const events = webhookValues(webhooks);
    const [row] = await this.#shapes.send(
      ["held", session.shape, ...patches.parts.map((patch) => patch.shape), calls.shape, events.shape].join(
        "/",
      ),
      () => {
        const db = this.#db;
        const patchedExist = patches.parts.map((_, index) =>
          exists(db.select({ turnId: turns.turnId }).from(turns).where(patchedTurn(index))),
        );
        return whileLeaseHeld(db, { set: session.set, also: and(...patchedExist) }, (held) => [
          ...patches.parts.map((patch, index) => turnPatchWrite(db, patch, index, held)),
          ...calls.writes(held),
          ...this.#webhookWrites(events, held),
        ]);
      },
      {
        ...keyOf(key),
        owner,
        ...session.values,
        ...patches.values,
        ...calls.values,
        ...events.values,
        ...(events.shape === "" ? {} : this.#leaseClock.values()),
      },
    );
    if (row === undefined) return { outcome: "stale" };
    calls.committed();
    return { outcome: "applied", session: toSession(row) };
  }

  /**
   * A claim as one statement (atomic without a transaction): first the session row's write, returning
   * it; then the turn insert, the turn patches and the mode history row, each only when that write was made.
   */
  #statement(
    shape: {
      creates: boolean;
      claims: boolean;
      capping: boolean;
      overridesLease: boolean;
      keepsLease: boolean;
      insertsTurn: boolean;
      changesMode: boolean;
      tellsWebhooks: boolean;
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
              ...(shape.keepsLease ? {} : { leaseExpiresAt: deadline }),
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
                shape.overridesLease || shape.keepsLease
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
      ...(shape.tellsWebhooks ? [webhookWrite(db, this.#leaseClock, claimed)] : []),
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

  /** The outbox insert of a write's webhook deliveries, when it has any, guarded by `held`. */
  #webhookWrites(events: { shape: string }, held: SQL) {
    return events.shape === "" ? [] : [webhookWrite(this.#db, this.#leaseClock, held)];
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
  turnPatches: NonNullable<TurnWrite["turnPatches"]>,
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

/** The columns an existing session row's write sets from values (the lease's deadline and counters are SQL). */
function sessionColumns(write: Exclude<TurnWrite, { guard: "create" | "lease" }>) {
  const { now, sessionPatch } = write;
  if (write.guard === "queue") {
    const changes = write.insertTurn !== undefined || sessionPatch !== undefined;
    return {
      ...(sessionPatch === undefined ? {} : sessionPatchSet(sessionPatch)),
      ...(changes ? { updatedAt: now } : {}),
    };
  }
  const claim = write.guard === "override" ? undefined : write;
  const changes =
    claim?.insertTurn !== undefined || sessionPatch !== undefined || claim?.modeChange !== undefined;
  return {
    leaseOwner: claim === undefined || claim.releaseLease === true ? null : claim.lease.owner,
    ...(sessionPatch === undefined ? {} : sessionPatchSet(sessionPatch)),
    ...(changes ? { updatedAt: now } : {}),
  };
}

/** A new session's row, but for its lease's deadline (SQL). */
function newSession(write: Extract<TurnWrite, { guard: "create" }>) {
  const { key, lease, now, create, insertTurn, sessionPatch, releaseLease } = write;
  return {
    ...key,
    ...create,
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
