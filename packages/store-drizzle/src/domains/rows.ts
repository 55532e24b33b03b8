import type {
  LlmCallRecord,
  ModeHistoryEntry,
  SessionKey,
  SessionPatch,
  SessionRecord,
  TurnPatch,
  TurnRecord,
} from "@aptix/core";
import { and, eq, type SQL } from "drizzle-orm";
import type { PgColumn, PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { llmCalls, modeHistory, sessions, turns } from "../schema.js";

/** A drizzle Postgres database over either driver (postgres.js or PGlite). */
export type StoreDatabase = PgDatabase<PgQueryResultHKT>;
export type StoreTransaction = Parameters<Parameters<StoreDatabase["transaction"]>[0]>[0];

type SessionRow = typeof sessions.$inferSelect;
type SessionWrite = Partial<typeof sessions.$inferInsert>;
type TurnRow = typeof turns.$inferSelect;
type LlmCallRow = typeof llmCalls.$inferSelect;
type ModeHistoryRow = typeof modeHistory.$inferSelect;

/** Thrown inside a transaction to roll it back and answer `answer` instead. */
export class Refusal<T> {
  constructor(readonly answer: T) {}
}

/** `work` in one transaction of `db`; a `Refusal` thrown inside rolls it back and becomes the answer. */
export async function transaction<T>(
  db: StoreDatabase,
  work: (tx: StoreTransaction) => Promise<T>,
): Promise<T> {
  try {
    return await db.transaction(work);
  } catch (error) {
    if (error instanceof Refusal) return error.answer as T;
    throw error;
  }
}

/**
 * Sends a query built inside a transaction as a prepared statement. Awaited as it is, drizzle sends a built query
 * unnamed, so Postgres parses and plans it on every call and postgres.js describes its rows again each time;
 * prepared, postgres.js keeps one statement per text on each connection and reuses it. For the hot path's
 * statements, whose texts take a few shapes only: each text is kept for the connection's life. (drizzle's PGlite
 * driver sends it as it does any statement.)
 */
export function sentPrepared<T>(query: { prepare(name: string): { execute(): Promise<T> } }): Promise<T> {
  return query.prepare("aptix_hot_path").execute();
}

export function keyWhere(table: { principal: PgColumn; sessionId: PgColumn }, key: SessionKey): SQL {
  return and(eq(table.principal, key.principal), eq(table.sessionId, key.sessionId)) as SQL;
}

/** The columns a `SessionPatch` sets: only the patchable keys with a value other than `undefined`. */
export function sessionPatchSet(patch: SessionPatch): SessionWrite {
  const set: SessionWrite = {};
  if (patch.mode !== undefined) set.mode = patch.mode;
  if (patch.solutionContextText !== undefined) set.solutionContextText = patch.solutionContextText;
  if (patch.cursor !== undefined) set.cursor = patch.cursor;
  if (patch.openTurnId !== undefined) set.openTurnId = patch.openTurnId;
  return set;
}

/** The columns a `TurnPatch` sets: only the patchable keys with a value other than `undefined`. */
export function turnPatchSet(patch: TurnPatch): Partial<typeof turns.$inferInsert> {
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

export function turnRow(turn: TurnRecord): typeof turns.$inferInsert {
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

export function toSession(row: SessionRow): SessionRecord {
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
    version: row.version,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function toTurn(row: TurnRow): TurnRecord {
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

export function toLlmCall(row: LlmCallRow): LlmCallRecord {
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

export function toModeHistoryEntry(row: ModeHistoryRow): ModeHistoryEntry {
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
