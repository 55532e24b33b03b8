import { SESSION_TITLE_LENGTH } from "@aptix/contracts";
import type {
  DeleteSessionInput,
  DeleteSessionResult,
  FindIdleSessionsInput,
  FinishResponseDeletionsInput,
  ListSessionsInput,
  LlmToolCall,
  MessageTurn,
  ModeHistoryEntry,
  ResponseDeletion,
  SessionDirectory,
  SessionKey,
  SessionListing,
  SessionRecord,
  TakeResponseDeletionsInput,
  TurnRecord,
  TurnStatus,
} from "@aptix/core";
import { and, asc, desc, eq, gte, inArray, isNull, lt, lte, or, type SQL, sql } from "drizzle-orm";
import {
  compactions,
  fileHolders,
  files,
  llmCalls,
  modeHistory,
  responseDeletions,
  sessions,
  transcriptItems,
  turnEvents,
  turns,
} from "../schema.js";
import type { LeaseClock } from "./lease.js";
import {
  keyOf,
  keyWhere,
  type StoreDatabase,
  type StoreTransaction,
  toModeHistoryEntry,
  toSession,
  toTurn,
} from "./rows.js";

// Core names a fork's input and outcome only in its port.
type ForkSessionInput = Parameters<SessionDirectory["forkSession"]>[0];
type ForkSessionResult = Awaited<ReturnType<SessionDirectory["forkSession"]>>;

const TRAILING_SPACE = "\\s+$";

/** `updatedAt` is written from a `Date` (milliseconds): the order and the page cursors agree exactly. */
const sessionIdOrder = sql`${sessions.sessionId} collate "C"`;

/** The status of the session's latest turn: one row of `turns_session_sequence_idx` (its key `|| ''`). */
const lastTurnStatus = sql<TurnStatus | null>`(select latest.status from ${turns} latest
  where (latest.principal || '') = ${sessions}.principal and (latest.session_id || '') = ${sessions}.session_id
  and latest.sequence = ${sessions}.turn_count limit 1)`;

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
 * Sessions by key, the owner's listings of sessions and turns, the deletion of a session with everything of it (the session's
 * rows, its turns' events and the files its turns produced, in one transaction: the event log and the file
 * store share this database), the session retention's read and the provider responses left to delete. Every
 * read by key goes by a primary key, or reads one session's rows through it.
 */
export class DrizzleSessionDirectory implements SessionDirectory {
  readonly #db: StoreDatabase;
  readonly #leaseClock: LeaseClock;
  readonly #prepared: ReturnType<typeof prepared>;

  constructor(db: StoreDatabase, leaseClock: LeaseClock) {
    this.#db = db;
    this.#leaseClock = leaseClock;
    this.#prepared = prepared(db);
  }

  async getSession(key: SessionKey): Promise<SessionRecord | undefined> {
    const [row] = await this.#prepared.getSession.execute(keyOf(key));
    return row === undefined ? undefined : toSession(row);
  }

  async listTurns(key: SessionKey): Promise<TurnRecord[]> {
    return (await this.#prepared.listTurns.execute(keyOf(key))).map(toTurn);
  }

  async listModeHistory(key: SessionKey): Promise<ModeHistoryEntry[]> {
    return (await this.#prepared.listModeHistory.execute(keyOf(key))).map(toModeHistoryEntry);
  }

  async listSessions(input: ListSessionsInput): Promise<SessionListing[]> {
    if (!(Math.ceil(input.limit) > 0)) return [];
    const rows = await sessionPage(this.#db, input);
    return rows.map(({ firstInstruction, workspaceId, lastTurnStatus: status, ...listed }) => ({
      ...listed,
      ...(status === null ? {} : { lastTurnStatus: status }),
      ...(firstInstruction === null ? {} : { firstInstruction }),
      ...(workspaceId === null ? {} : { workspaceId }),
    }));
  }

  /**
   * A page of a session's turns as messages show them, in one statement through `turns_session_sequence_idx`:
   * parts of each turn's columns (its instruction, not its artifacts), and of its LLM calls their tool calls
   * only, never their payloads.
   */
  async listMessageTurns(key: SessionKey, fromSequence: number, limit: number): Promise<MessageTurn[]> {
    // Qualified by hand: drizzle writes a column without its table, which in a subquery names the inner one.
    const toolCalls = sql<
      LlmToolCall[]
    >`(select coalesce(jsonb_agg(call order by c.call_index, ordinal), '[]'::jsonb)
      from ${llmCalls} c, jsonb_array_elements(coalesce(c.response -> 'toolCalls', '[]'::jsonb)) with ordinality as calls(call, ordinal)
      where c.principal = ${turns}.principal and c.session_id = ${turns}.session_id and c.turn_id = ${turns}.turn_id)`;
    const rows = await this.#db
      .select({
        turnId: turns.turnId,
        status: turns.status,
        error: turns.error,
        createdAt: turns.createdAt,
        updatedAt: turns.updatedAt,
        completedAt: turns.completedAt,
        instruction: sql<string | null>`${turns.rounds} -> 0 -> 'request' ->> 'instruction'`,
        clientResults: sql<
          MessageTurn["toolOutcomes"]
        >`jsonb_path_query_array(${turns.rounds}, '$[1 to last].request.toolResults[*]')`,
        serverRuns: turns.toolExecutions,
        answer: sql<MessageTurn["answer"] | null>`${turns.rounds} -> -1 -> 'result'`,
        toolCalls,
      })
      .from(turns)
      .where(
        and(
          // `|| ''`: through `turns_session_sequence_idx`, in order, never the session's every turn.
          sql`(${turns.principal} || '') = ${key.principal}`,
          sql`(${turns.sessionId} || '') = ${key.sessionId}`,
          gte(turns.sequence, fromSequence),
        ),
      )
      .orderBy(asc(turns.sequence))
      .limit(Math.max(0, Math.ceil(limit)));
    return rows.map(({ instruction, clientResults, serverRuns, answer, ...turn }) => ({
      ...turn,
      ...(instruction === null ? {} : { instruction }),
      toolOutcomes: [...serverRuns, ...clientResults].map(({ toolCallId, resultJson, errorMessage }) => ({
        toolCallId,
        ...(resultJson === undefined ? {} : { resultJson }),
        ...(errorMessage === undefined ? {} : { errorMessage }),
      })),
      ...(answer === null ? {} : { answer }),
    }));
  }

  async findIdleSessions({ idleBefore, limit }: FindIdleSessionsInput): Promise<SessionKey[]> {
    return this.#db
      .select({ principal: sessions.principal, sessionId: sessions.sessionId })
      .from(sessions)
      .where(lt(sessions.updatedAt, idleBefore))
      .limit(Math.max(0, Math.ceil(limit)));
  }

  async takeResponseDeletions({
    limit,
    dueBy,
    retryAt,
  }: TakeResponseDeletionsInput): Promise<ResponseDeletion[]> {
    const count = Math.ceil(limit);
    if (!(count > 0)) return [];
    // Taken and put off in one statement: two instances' runs never take the same deletion.
    const due = this.#db
      .select({ provider: responseDeletions.provider, responseId: responseDeletions.responseId })
      .from(responseDeletions)
      .where(lte(responseDeletions.nextAttemptAt, dueBy))
      .orderBy(asc(responseDeletions.nextAttemptAt))
      .limit(count)
      .for("update", { skipLocked: true });
    return this.#db
      .update(responseDeletions)
      .set({ nextAttemptAt: retryAt })
      .where(sql`(${responseDeletions.provider}, ${responseDeletions.responseId}) in (${due})`)
      .returning({
        provider: responseDeletions.provider,
        responseId: responseDeletions.responseId,
        attempts: responseDeletions.attempts,
      });
  }

  async finishResponseDeletions({ done, failed }: FinishResponseDeletionsInput): Promise<void> {
    const named = (deletion: Pick<ResponseDeletion, "provider" | "responseId">) =>
      and(
        eq(responseDeletions.provider, deletion.provider),
        eq(responseDeletions.responseId, deletion.responseId),
      );
    if (done.length > 0) await this.#db.delete(responseDeletions).where(or(...done.map(named)));
    for (const deletion of failed) {
      await this.#db
        .update(responseDeletions)
        .set({ attempts: sql`${responseDeletions.attempts} + 1`, nextAttemptAt: deletion.retryAt })
        .where(named(deletion));
    }
  }

  /** Locks the session row first, so no write of the session commits between the judgement and the deletes. */
  async forkSession(input: ForkSessionInput): Promise<ForkSessionResult> {
    const { source } = input;
    return this.#db.transaction(async (tx): Promise<ForkSessionResult> => {
      const [row] = await tx.select().from(sessions).where(keyWhere(sessions, source)).for("update");
      if (row === undefined || row.version !== input.expectVersion) return "stale";
      const before = lt(turns.sequence, input.beforeSequence);
      const copied = await tx
        .select()
        .from(turns)
        .where(and(keyWhere(turns, source), before));
      const inserted = await tx
        .insert(sessions)
        .values({
          ...row,
          sessionId: input.sessionId,
          mode: input.mode,
          cursor: input.cursor,
          openTurnId: null,
          turnCount: copied.length,
          version: 1,
          leaseOwner: null,
          leaseExpiresAt: null,
          firstInstruction: copied.length > 0 ? row.firstInstruction : null,
          forkedFromSessionId: input.forkedFrom.sessionId,
          forkedFromTurnId: input.forkedFrom.turnId,
          createdAt: input.now,
          updatedAt: input.now,
        })
        .onConflictDoNothing()
        .returning({ sessionId: sessions.sessionId });
      if (inserted.length === 0) return "stale";
      const items = await tx
        .select()
        .from(transcriptItems)
        .where(
          and(keyWhere(transcriptItems, source), lt(transcriptItems.position, input.cursor.transcriptLength)),
        );
      if (copied.length > 0) {
        await tx.insert(turns).values(copied.map((turn) => ({ ...turn, sessionId: input.sessionId })));
      }
      if (items.length > 0) {
        await tx
          .insert(transcriptItems)
          .values(items.map((item) => ({ ...item, sessionId: input.sessionId })));
      }
      if (copied.length > 0) {
        const copiedTurnIds = copied.map((turn) => turn.turnId);
        await copyCompactions(tx, source, input.sessionId, copiedTurnIds);
        await copyModeHistory(tx, source, input.sessionId, copiedTurnIds);
        await shareFiles(tx, source, input.sessionId, copiedTurnIds);
      }
      return "forked";
    });
  }

  async deleteSession({
    key,
    expectVersion,
    fileIds,
    responsesStoredBy,
  }: DeleteSessionInput): Promise<DeleteSessionResult> {
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
      // Before the calls go: the responses they name, to delete at the provider that stored them.
      if (responsesStoredBy !== undefined) {
        const responseId = sql<string>`${llmCalls.response} ->> 'responseId'`;
        await tx
          .insert(responseDeletions)
          .select(
            tx
              .selectDistinct({
                provider: sql<string>`${responsesStoredBy}::text`.as("provider"),
                responseId: responseId.as("response_id"),
                attempts: sql<number>`0`.as("attempts"),
                // Due at once.
                nextAttemptAt: sql<Date>`'epoch'::timestamptz`.as("next_attempt_at"),
              })
              .from(llmCalls)
              .where(and(keyWhere(llmCalls, key), sql`${responseId} is not null`)),
          )
          .onConflictDoNothing();
      }
      await releaseFiles(tx, key);
      await Promise.all([
        tx.delete(turns).where(keyWhere(turns, key)),
        tx.delete(transcriptItems).where(keyWhere(transcriptItems, key)),
        tx.delete(llmCalls).where(keyWhere(llmCalls, key)),
        tx.delete(modeHistory).where(keyWhere(modeHistory, key)),
        tx.delete(compactions).where(keyWhere(compactions, key)),
        tx.delete(turnEvents).where(keyWhere(turnEvents, key)),
        // The files its turns produced, listed on them or not (a failed round's), but none another session took.
        tx.delete(files).where(and(eq(files.principal, key.principal), eq(files.sessionId, key.sessionId))),
        ...(fileIds.length > 0
          ? [
              tx
                .delete(files)
                .where(
                  and(
                    eq(files.principal, key.principal),
                    inArray(files.fileId, [...fileIds]),
                    isNull(files.sessionId),
                  ),
                ),
            ]
          : []),
      ]);
      await tx.delete(sessions).where(keyWhere(sessions, key));
      return "deleted";
    });
  }
}

/** The compactions made in the turns a fork copies, as the fork's: its view lists what its cursor went through. */
async function copyCompactions(
  tx: StoreTransaction,
  source: SessionKey,
  forkId: string,
  copiedTurnIds: string[],
): Promise<void> {
  const made = await tx
    .select()
    .from(compactions)
    .where(and(keyWhere(compactions, source), inArray(compactions.turnId, copiedTurnIds)));
  if (made.length > 0) {
    await tx.insert(compactions).values(made.map((compaction) => ({ ...compaction, sessionId: forkId })));
  }
}

/** The mode changes the copied turns made, in their order (new ids, as the list is read by id). */
async function copyModeHistory(
  tx: StoreTransaction,
  source: SessionKey,
  forkId: string,
  copiedTurnIds: string[],
): Promise<void> {
  const changes = await tx
    .select()
    .from(modeHistory)
    .where(and(keyWhere(modeHistory, source), inArray(modeHistory.turnId, copiedTurnIds)))
    .orderBy(asc(modeHistory.id));
  if (changes.length > 0) {
    await tx
      .insert(modeHistory)
      .values(changes.map(({ id: _id, ...change }) => ({ ...change, sessionId: forkId })));
  }
}

/**
 * A fork's share of its source's files: those of the copied turns that the source produced or holds are held by
 * the fork too (`file_holders`). Shared rather than copied: the copied turns name them by id.
 */
async function shareFiles(
  tx: StoreTransaction,
  source: SessionKey,
  forkId: string,
  copiedTurnIds: string[],
): Promise<void> {
  const heldBySource = tx
    .select({ fileId: fileHolders.fileId })
    .from(fileHolders)
    .where(keyWhere(fileHolders, source));
  await tx
    .insert(fileHolders)
    .select(
      tx
        .select({
          principal: files.principal,
          fileId: files.fileId,
          sessionId: sql<string>`${forkId}::text`.as("session_id"),
        })
        .from(files)
        .where(
          and(
            eq(files.principal, source.principal),
            inArray(files.turnId, copiedTurnIds),
            or(eq(files.sessionId, source.sessionId), inArray(files.fileId, heldBySource)),
          ),
        ),
    )
    .onConflictDoNothing();
}

/**
 * A deleted session's files, before its own are deleted: it holds none any more, and each one it produced that
 * another session holds becomes that session's (the first by id; its turn has the same id there).
 */
async function releaseFiles(tx: StoreTransaction, key: SessionKey): Promise<void> {
  await tx.delete(fileHolders).where(keyWhere(fileHolders, key));
  await tx.execute(sql`with heirs as (
      select distinct on (h.file_id) h.file_id, h.session_id from ${fileHolders} h
      join ${files} f on f.principal = h.principal and f.file_id = h.file_id
      where h.principal = ${key.principal} and f.session_id = ${key.sessionId}
      order by h.file_id, h.session_id collate "C"
    ), taken as (
      update ${files} f set session_id = heirs.session_id from heirs
      where f.principal = ${key.principal} and f.file_id = heirs.file_id
      returning f.file_id, f.session_id
    )
    delete from ${fileHolders} h using taken
    where h.principal = ${key.principal} and h.file_id = taken.file_id and h.session_id = taken.session_id`);
}

/**
 * A page of the principal's sessions, newest first, through `sessions_principal_updated_idx`: the columns the
 * list shows, and the latest turn's status by `turns_session_sequence_idx`, for the page's rows only.
 */
export function sessionPage(
  db: StoreDatabase,
  { principal, limit, workspaceId, titleContains, after }: ListSessionsInput,
) {
  // `|| ''`: through `sessions_principal_updated_idx` (see the schema).
  const where: SQL[] = [sql`(${sessions.principal} || '') = ${principal}`];
  if (workspaceId !== undefined) where.push(eq(sessions.workspaceId, workspaceId));
  if (titleContains !== undefined) {
    // strpos, not LIKE: the text is matched as it is, `%` and `_` included. `left` counts characters where the
    // title counts UTF-16 code units: they differ only past the Basic Multilingual Plane.
    const title = sql`regexp_replace(left(${sessions.firstInstruction}, ${SESSION_TITLE_LENGTH}::int), ${TRAILING_SPACE}, '')`;
    where.push(sql`strpos(lower(${title}), lower(${titleContains}::text)) > 0`);
  }
  if (after !== undefined) {
    where.push(
      sql`(${sessions.updatedAt}, ${sessionIdOrder}) < (${after.updatedAt.toISOString()}::timestamptz, ${after.sessionId} collate "C")`,
    );
  }
  return db
    .select({
      sessionId: sessions.sessionId,
      mode: sessions.mode,
      turnCount: sessions.turnCount,
      createdAt: sessions.createdAt,
      updatedAt: sessions.updatedAt,
      firstInstruction: sessions.firstInstruction,
      workspaceId: sessions.workspaceId,
      lastTurnStatus,
    })
    .from(sessions)
    .where(and(...where))
    .orderBy(desc(sessions.updatedAt), desc(sessionIdOrder))
    .limit(Math.ceil(limit));
}
