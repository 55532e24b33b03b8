import type {
  LlmCallRecord,
  ModeHistoryEntry,
  SessionKey,
  SessionPatch,
  SessionRecord,
  TurnPatch,
  TurnRecord,
} from "@aptix/core";
import { and, type ColumnsSelection, eq, getTableColumns, getTableName, type SQL, sql } from "drizzle-orm";
import type { PgColumn, PgDatabase, PgQueryResultHKT, PgTable } from "drizzle-orm/pg-core";
import type { TypedQueryBuilder } from "drizzle-orm/query-builders/query-builder";
import { type llmCalls, modeHistory, type sessions, type turns } from "../schema.js";

/** A drizzle Postgres database over either driver (postgres.js or PGlite). */
export type StoreDatabase = PgDatabase<PgQueryResultHKT>;
export type StoreTransaction = Parameters<Parameters<StoreDatabase["transaction"]>[0]>[0];

type SessionRow = typeof sessions.$inferSelect;
type SessionWrite = Partial<typeof sessions.$inferInsert>;
type TurnRow = typeof turns.$inferSelect;
type LlmCallRow = typeof llmCalls.$inferSelect;
type ModeHistoryRow = typeof modeHistory.$inferSelect;

/** A data-modifying query with `returning`, to be sent as a part of a larger statement (`db.$with(…).as(write)`). */
export type Write = TypedQueryBuilder<ColumnsSelection>;

/**
 * The select of an `insert … select` into `table` of the rows in the JSON array that the placeholder `name`
 * holds (`rowsJson`), where `condition` holds: every column drizzle inserts, in its order, read by
 * `jsonb_populate_recordset`. So a guarded insert goes in the same statement as its guard, with one parameter
 * whatever the number of rows. Columns not given are null (no column defaults), except serial ones; `computed`
 * gives some columns by SQL instead. `name` may instead give the whole `from` clause, which must name the rows `r`.
 */
export function rowsWhere(
  table: PgTable,
  name: string | { from: SQL },
  condition: SQL,
  computed: Readonly<Record<string, SQL>> = {},
): SQL {
  const selected = sql.join(
    Object.entries(getTableColumns(table) as Record<string, PgColumn>).map(([key, column]) => {
      const value = sql`r.${sql.identifier(column.name)}`;
      const given = computed[key];
      if (given !== undefined) return given;
      // A serial column (mode_history's `id`) left out takes the next value of its sequence, as its default would.
      return column.columnType.includes("Serial")
        ? sql`coalesce(${value}, nextval(pg_get_serial_sequence(${sql.raw(`'${getTableName(table)}'`)}, ${sql.raw(`'${column.name}'`)})))`
        : value;
    }),
    sql`, `,
  );
  const from =
    typeof name === "string"
      ? sql`jsonb_populate_recordset(null::${table}, ${sql.placeholder(name)}::jsonb) as r`
      : name.from;
  return sql`select ${selected} from ${from} where ${condition}`;
}

/** `rows` as the JSON text `rowsWhere` reads: each row by its columns' names. */
export function rowsJson<T extends PgTable>(table: T, rows: readonly T["$inferInsert"][]): string {
  const columns = Object.entries(getTableColumns(table) as Record<string, PgColumn>);
  return JSON.stringify(
    rows.map((row) =>
      Object.fromEntries(
        columns.map(([key, column]) => {
          const value = (row as Record<string, unknown>)[key];
          return [column.name, value instanceof Date ? value.toISOString() : (value ?? null)];
        }),
      ),
    ),
  );
}

/** Columns of a row set by placeholders: built into a statement once, their values sent each time. */
export interface Placeholders {
  /** The columns, each set by a placeholder named after `prefix` and the column's key. */
  set: Record<string, SQL>;
  /** The placeholders' values, encoded as drizzle encodes each column's values. */
  values: Record<string, unknown>;
  /** The columns set, in order: a part of the statement's shape. */
  shape: string;
}

export function placeholders<T extends PgTable>(
  table: T,
  prefix: string,
  record: Partial<T["$inferInsert"]>,
): Placeholders {
  const columns = getTableColumns(table) as Record<string, PgColumn>;
  const set: Record<string, SQL> = {};
  const values: Record<string, unknown> = {};
  const keys: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    const column = columns[key];
    if (value === undefined || column === undefined) continue;
    set[key] = sql`${sql.placeholder(prefix + key)}`;
    values[prefix + key] = value === null ? null : column.mapToDriverValue(value);
    keys.push(key);
  }
  return { set, values, shape: keys.join(",") };
}

interface Preparable<T> {
  prepare(name: string): { execute(values?: Record<string, unknown>): Promise<T> };
}

/** More shapes than any store's statements take: a guard against a bug that would make one per call. */
const MAX_SHAPES = 256;

/**
 * Statements built once for each shape and prepared. drizzle takes about as long to build a hot-path statement
 * as the database takes to run it, so these are built with placeholders, kept under a key that names their shape
 * (which columns they set, which writes they make), and sent with each call's values. postgres.js keeps each
 * text prepared on each connection; PGlite parses it each time.
 */
export class PreparedShapes {
  readonly #statements = new Map<string, { execute(values?: Record<string, unknown>): Promise<unknown> }>();

  send<T>(shape: string, build: () => Preparable<T>, values: Record<string, unknown>): Promise<T> {
    let statement = this.#statements.get(shape);
    if (statement === undefined) {
      if (this.#statements.size >= MAX_SHAPES) this.#statements.clear();
      statement = build().prepare("aptix_hot_path");
      this.#statements.set(shape, statement);
    }
    return statement.execute(values) as Promise<T>;
  }
}

/**
 * `writes` as parts of a larger statement (`db.with(first, ...parts(db, writes))`): one statement is atomic
 * without a transaction, and each write is conditioned on `first`'s rows (see `rowsWhere`).
 */
export function parts(db: StoreDatabase, writes: readonly Write[]) {
  return writes.map((write, index) => db.$with(`write_${index}`).as(write));
}

/** Whether `error` (or the driver's error drizzle wraps in it) is Postgres's unique_violation. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (value: unknown) => (value as { code?: unknown } | null)?.code;
  return code(error) === "23505" || code((error as { cause?: unknown } | null)?.cause) === "23505";
}

export function keyWhere(table: { principal: PgColumn; sessionId: PgColumn }, key: SessionKey): SQL {
  return and(eq(table.principal, key.principal), eq(table.sessionId, key.sessionId)) as SQL;
}

/** A key's two columns alone, as the prepared statements' placeholders name them. */
export function keyOf(key: SessionKey): { principal: string; sessionId: string } {
  return { principal: key.principal, sessionId: key.sessionId };
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
  if (patch.startCursor !== undefined) set.startCursor = patch.startCursor;
  if (patch.mode !== undefined) set.mode = patch.mode;
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

/** Appends the mode history row in the placeholder `name` (`modeHistoryJson`) where `condition` holds. */
export function modeHistoryWrite(db: StoreDatabase, name: string, condition: SQL): Write {
  return db
    .insert(modeHistory)
    .select(rowsWhere(modeHistory, name, condition))
    .returning({ id: modeHistory.id });
}

export function modeHistoryJson(entry: ModeHistoryEntry): string {
  return rowsJson(modeHistory, [
    {
      principal: entry.principal,
      sessionId: entry.sessionId,
      turnId: entry.turnId,
      previousMode: entry.previousMode,
      newMode: entry.newMode,
      reason: entry.reason,
      changedBy: entry.changedBy,
      changedAt: new Date(entry.changedAt),
    },
  ]);
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
    ...(row.forkedFromSessionId === null
      ? {}
      : { forkedFrom: { sessionId: row.forkedFromSessionId, turnId: row.forkedFromTurnId } }),
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
    // JSON holds a run's start as a string.
    toolExecutions: row.toolExecutions.map(({ startedAt, ...run }) =>
      startedAt === undefined ? run : { ...run, startedAt: new Date(startedAt) },
    ),
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
    // A call kept before calls had ids: its key in the trace names it.
    callId: row.callId ?? `${row.turnId}#${row.callIndex}`,
    ...(row.provider === null ? {} : { provider: row.provider }),
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
