import {
  EMPTY_CURSOR,
  type SessionKey,
  type TransitionResult,
  type TransitionWrite,
  type TurnState,
} from "@aptix/core";
import { and, eq, isNull, lte, or, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { modeHistory, sessions, turns } from "../schema.js";
import type { LeaseClock } from "./lease.js";
import {
  keyWhere,
  Refusal,
  type StoreDatabase,
  type StoreTransaction,
  sentPrepared,
  sessionPatchSet,
  toSession,
  toTurn,
  transaction,
  turnPatchSet,
  turnRow,
} from "./rows.js";

type Refused = Exclude<TransitionResult["outcome"], "applied">;

/** Rolls the transition's transaction back and answers `outcome` instead. */
function refuse(outcome: Refused): never {
  throw new Refusal<TransitionResult>({ outcome });
}

/**
 * The sessions-and-turns domain's transitions (`SessionStore.readTurnState`, `applyTransition`), on drizzle's
 * query builder:
 *
 * - `readTurnState` is one prepared statement: the session row, joined to the turn the request names and to its
 *   open turn (primary-key lookups only, so the rows read stay flat in the session's length).
 * - `applyTransition` is one ordinary transaction: first the session row, written only while its lease is free
 *   (or expired by the leases' clock), its `version` the one read and, when `maxRunningTurns` is given, the
 *   principal below the cap (migration 0007's `aptix_at_running_cap`); or, for a new session, inserted with
 *   `ON CONFLICT DO NOTHING`. That write locks the row, so racing transitions queue and the later one sees the
 *   new version. When it writes nothing, one select tells rate_limited from busy from stale. Then the turn
 *   insert (a conflict: stale), the turn patches, the mode history row. A refusal rolls everything back.
 *   It commits without waiting for the disk (`synchronous_commit` off for its own transaction): what it writes
 *   matters to a client only once the round's settlement, a synchronous commit, has flushed it with its own;
 *   a database crash in between loses the transition with the round, and the request sent again runs anew.
 */
export class TurnTransitions {
  readonly #db: StoreDatabase;
  readonly #leaseClock: LeaseClock;
  readonly #read;

  constructor(db: StoreDatabase, leaseClock: LeaseClock) {
    this.#db = db;
    this.#leaseClock = leaseClock;
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

  applyTransition(write: TransitionWrite): Promise<TransitionResult> {
    return transaction(this.#db, async (tx): Promise<TransitionResult> => {
      // Sent together: postgres.js pipelines them on the transaction's connection.
      const [, session] = await Promise.all([
        tx.execute(sql`set local synchronous_commit = off`),
        this.#writeSession(tx, write),
      ]);
      const { key, now, insertTurn, turnPatches = [], modeChange } = write;
      if (insertTurn !== undefined) {
        const inserted = await sentPrepared(
          tx
            .insert(turns)
            .values(turnRow(insertTurn))
            .onConflictDoNothing()
            .returning({ turnId: turns.turnId }),
        );
        if (inserted.length === 0) refuse("stale");
      }
      for (const { turnId, patch } of turnPatches) {
        const patched = await sentPrepared(
          tx
            .update(turns)
            .set({ ...turnPatchSet(patch), updatedAt: now })
            .where(and(keyWhere(turns, key), eq(turns.turnId, turnId)))
            .returning({ turnId: turns.turnId }),
        );
        if (patched.length === 0) refuse("stale");
      }
      if (modeChange !== undefined) await tx.insert(modeHistory).values(modeChange);
      return { outcome: "applied" as const, session };
    });
  }

  /** Claims the lease and writes the session row (creating it when asked), or throws why it may not. */
  async #writeSession(tx: StoreTransaction, write: TransitionWrite) {
    const { key, lease, now, expectVersion, create, insertTurn, sessionPatch, modeChange } = write;
    const capped =
      write.maxRunningTurns === undefined
        ? undefined
        : sql`"aptix_at_running_cap"(${key.principal}, ${write.maxRunningTurns}::integer, ${this.#leaseClock.now()})`;
    const claimed = write.releaseLease
      ? { leaseOwner: null, leaseExpiresAt: null }
      : { leaseOwner: lease.owner, leaseExpiresAt: this.#leaseClock.now(lease.durationMs) };
    const changes = insertTurn !== undefined || sessionPatch !== undefined || modeChange !== undefined;
    if (expectVersion === undefined) {
      if (create === undefined) refuse("stale");
      if (capped !== undefined) {
        const [judged] = await tx.select({ capped: sql<boolean>`${capped}` }).from(sql`(select 1) as one`);
        if (judged?.capped === true) refuse("rate_limited");
      }
      const [row] = await tx
        .insert(sessions)
        .values({
          ...key,
          ...create,
          solutionContextText: null,
          cursor: EMPTY_CURSOR,
          openTurnId: null,
          ...(sessionPatch === undefined ? {} : sessionPatchSet(sessionPatch)),
          turnCount: insertTurn === undefined ? 0 : 1,
          version: 1,
          ...claimed,
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoNothing()
        .returning();
      if (row === undefined) refuse(await this.#whyNot(tx, key, capped));
      return toSession(row);
    }
    const leaseFree = or(isNull(sessions.leaseOwner), lte(sessions.leaseExpiresAt, this.#leaseClock.now()));
    const [row] = await sentPrepared(
      tx
        .update(sessions)
        .set({
          ...claimed,
          ...(sessionPatch === undefined ? {} : sessionPatchSet(sessionPatch)),
          ...(insertTurn === undefined ? {} : { turnCount: sql`${sessions.turnCount} + 1` }),
          ...(changes ? { updatedAt: now } : {}),
          version: sql`${sessions.version} + 1`,
        })
        .where(
          and(
            eq(sessions.principal, key.principal),
            eq(sessions.sessionId, key.sessionId),
            eq(sessions.version, expectVersion),
            leaseFree,
            ...(capped === undefined ? [] : [sql`not ${capped}`]),
          ),
        )
        .returning(),
    );
    if (row === undefined) refuse(await this.#whyNot(tx, key, capped));
    return toSession(row);
  }

  /** Why the session row was not written: the cap first, then a held lease, else the session moved on. */
  async #whyNot(tx: StoreTransaction, key: SessionKey, capped: SQL | undefined): Promise<Refused> {
    const [row] = await tx
      .select({
        capped: capped === undefined ? sql<boolean>`false` : sql<boolean>`${capped}`,
        held: sql<boolean>`${sessions.leaseOwner} is not null and ${sessions.leaseExpiresAt} > ${this.#leaseClock.now()}`,
      })
      .from(sessions)
      .where(keyWhere(sessions, key));
    if (row?.capped === true) return "rate_limited";
    return row?.held === true ? "busy" : "stale";
  }
}
