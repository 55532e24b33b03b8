import type {
  DeleteSessionInput,
  DeleteSessionResult,
  FindIdleSessionsInput,
  ListSessionsInput,
  PruneTracesInput,
  SessionKey,
  SessionListing,
  TurnRecord,
  TurnStatus,
} from "@aptix/core";
import { and, asc, desc, eq, gte, inArray, isNotNull, lt, type SQL, sql } from "drizzle-orm";
import { files, llmCalls, modeHistory, sessions, transcriptItems, turnEvents, turns } from "../schema.js";
import type { LeaseClock } from "./lease.js";
import { keyWhere, type StoreDatabase, toSession, toTurn } from "./rows.js";

/** The session's turns, in a subquery of the session row. */
const ofTheSession = sql`${turns.principal} = ${sessions.principal} and ${turns.sessionId} = ${sessions.sessionId}`;
/** A turn's user request (its first round's). */
const userRequest = sql`(${turns.rounds} -> 0 -> 'request')`;
/** `updatedAt` as a `Date` holds it: the order and the page cursors agree to the millisecond. */
const activeAt = sql`date_trunc('milliseconds', ${sessions.updatedAt})`;
const sessionIdOrder = sql`${sessions.sessionId} collate "C"`;

const lastTurnStatus = sql<TurnStatus | null>`(select ${turns.status} from ${turns}
  where ${ofTheSession} and ${turns.sequence} = ${sessions.turnCount} limit 1)`;
const firstInstruction = sql<string | null>`(select ${userRequest} ->> 'instruction' from ${turns}
  where ${ofTheSession} and ${userRequest} ->> 'instruction' is not null order by ${turns.sequence} limit 1)`;
const lastWorkspaceId = sql<string | null>`(select ${userRequest} ->> 'workspaceId' from ${turns}
  where ${ofTheSession} and ${userRequest} ->> 'workspaceId' is not null order by ${turns.sequence} desc limit 1)`;

/**
 * The owner's listings of sessions and turns, the deletion of a session with everything of it (the session's
 * rows, its turns' events and the files its turns produced, in one transaction: the event log and the file
 * store share this database), and the retention sweeps' reads and writes.
 */
export class SessionDirectory {
  readonly #db: StoreDatabase;
  readonly #leaseClock: LeaseClock;

  constructor(db: StoreDatabase, leaseClock: LeaseClock) {
    this.#db = db;
    this.#leaseClock = leaseClock;
  }

  async listSessions({ principal, limit, workspaceId, after }: ListSessionsInput): Promise<SessionListing[]> {
    const count = Math.ceil(limit);
    if (!(count > 0)) return [];
    const where: SQL[] = [eq(sessions.principal, principal)];
    if (workspaceId !== undefined) where.push(sql`${lastWorkspaceId} = ${workspaceId}`);
    if (after !== undefined) {
      where.push(
        sql`(${activeAt}, ${sessionIdOrder}) < (${after.updatedAt.toISOString()}::timestamptz, ${after.sessionId} collate "C")`,
      );
    }
    const rows = await this.#db
      .select({ session: sessions, lastTurnStatus, firstInstruction, workspaceId: lastWorkspaceId })
      .from(sessions)
      .where(and(...where))
      .orderBy(desc(activeAt), desc(sessionIdOrder))
      .limit(count);
    return rows.map((row) => {
      const listing: SessionListing = { session: toSession(row.session) };
      if (row.lastTurnStatus !== null) listing.lastTurnStatus = row.lastTurnStatus;
      if (row.firstInstruction !== null) listing.firstInstruction = row.firstInstruction;
      if (row.workspaceId !== null) listing.workspaceId = row.workspaceId;
      return listing;
    });
  }

  async listTurnPage(key: SessionKey, fromSequence: number, limit: number): Promise<TurnRecord[]> {
    const rows = await this.#db
      .select()
      .from(turns)
      .where(and(keyWhere(turns, key), gte(turns.sequence, fromSequence)))
      .orderBy(asc(turns.sequence))
      .limit(Math.max(0, Math.ceil(limit)));
    return rows.map(toTurn);
  }

  async findIdleSessions({ idleBefore, limit }: FindIdleSessionsInput): Promise<SessionKey[]> {
    return this.#db
      .select({ principal: sessions.principal, sessionId: sessions.sessionId })
      .from(sessions)
      .where(lt(sessions.updatedAt, idleBefore))
      .limit(Math.max(0, Math.ceil(limit)));
  }

  /** One statement: the oldest unpruned calls (a partial index holds them), their payloads set to null. */
  async pruneTraces({ startedBefore, limit }: PruneTracesInput): Promise<number> {
    const count = Math.ceil(limit);
    if (!(count > 0)) return 0;
    const due = this.#db
      .select({
        principal: llmCalls.principal,
        sessionId: llmCalls.sessionId,
        turnId: llmCalls.turnId,
        callIndex: llmCalls.callIndex,
      })
      .from(llmCalls)
      .where(and(isNotNull(llmCalls.request), lt(llmCalls.startedAt, startedBefore)))
      .orderBy(asc(llmCalls.startedAt))
      .limit(count);
    const pruned = await this.#db
      .update(llmCalls)
      .set({
        request: null,
        providerRequest: null,
        providerResponse: null,
        requestTools: null,
        providerRequestTools: null,
      })
      .where(
        sql`(${llmCalls.principal}, ${llmCalls.sessionId}, ${llmCalls.turnId}, ${llmCalls.callIndex}) in (${due})`,
      )
      .returning({ turnId: llmCalls.turnId });
    return pruned.length;
  }

  /** Locks the session row first, so no write of the session commits between the judgement and the deletes. */
  async deleteSession({ key, expectVersion, fileIds }: DeleteSessionInput): Promise<DeleteSessionResult> {
    return this.#db.transaction(async (tx): Promise<DeleteSessionResult> => {
      const [row] = await tx
        .select({
          version: sessions.version,
          held: sql<boolean>`coalesce(${sessions.leaseExpiresAt} > ${this.#leaseClock.now()}, false)`,
        })
        .from(sessions)
        .where(keyWhere(sessions, key))
        .for("update")
        .prepare("delete_session_judgement")
        .execute(this.#leaseClock.values());
      // Refused, it has written nothing: the transaction ends holding no more than the row's lock.
      if (row === undefined || row.version !== expectVersion) return "stale";
      if (row.held) return "busy";
      await Promise.all([
        tx.delete(turns).where(keyWhere(turns, key)),
        tx.delete(transcriptItems).where(keyWhere(transcriptItems, key)),
        tx.delete(llmCalls).where(keyWhere(llmCalls, key)),
        tx.delete(modeHistory).where(keyWhere(modeHistory, key)),
        tx.delete(turnEvents).where(keyWhere(turnEvents, key)),
        ...(fileIds.length > 0
          ? [
              tx
                .delete(files)
                .where(and(eq(files.principal, key.principal), inArray(files.fileId, [...fileIds]))),
            ]
          : []),
      ]);
      await tx.delete(sessions).where(keyWhere(sessions, key));
      return "deleted";
    });
  }
}
