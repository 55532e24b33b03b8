/**
 * The drizzle schema of the Aptix store. Tables are declared without a Postgres schema (plain `pgTable`), so
 * drizzle-kit writes unqualified SQL and the store places every table in the schema it is opened with, through
 * the connection's `search_path`. `drizzle-kit generate` (`pnpm --filter @aptix/store-drizzle db:generate`)
 * turns changes here into a migration under `drizzle/`; a test fails when the two drift.
 *
 * Keep this module free of runtime imports other than drizzle-orm: drizzle-kit loads it on its own.
 */
import type {
  ConversationCursor,
  LlmCallRecord,
  PendingToolCalls,
  ServerToolExecution,
  TranscriptItem,
  TurnRecord,
  TurnRound,
  TurnStatus,
} from "@aptix/core";
import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  customType,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from "drizzle-orm/pg-core";

/** `timestamp with time zone`, read and written as a `Date`. */
function timestamptz(name: string) {
  return timestamp(name, { withTimezone: true, mode: "date" });
}

/**
 * `bytea` as a `Uint8Array` (drizzle-orm 0.45 has no built-in bytea column). postgres.js answers a `Buffer` and
 * PGlite a `Uint8Array`; both come out as a plain `Uint8Array` copy.
 */
export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType() {
    return "bytea";
  },
  toDriver(value) {
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  },
  fromDriver(value) {
    return Uint8Array.from(value);
  },
});

/** One row per (principal, sessionId): the session record and its lease. */
export const sessions = pgTable(
  "sessions",
  {
    principal: text("principal").notNull(),
    sessionId: text("session_id").notNull(),
    conversationContextId: text("conversation_context_id").notNull(),
    agentContextId: text("agent_context_id"),
    mode: text("mode").notNull(),
    solutionContextText: text("solution_context_text"),
    cursor: jsonb("cursor").$type<ConversationCursor>().notNull(),
    openTurnId: text("open_turn_id"),
    turnCount: integer("turn_count").notNull().default(0),
    /** Null when no lease is held (never claimed, or released); set and cleared together with the expiry. */
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: timestamptz("lease_expires_at"),
    createdAt: timestamptz("created_at").notNull(),
    updatedAt: timestamptz("updated_at").notNull(),
  },
  (table) => [
    primaryKey({ name: "sessions_pkey", columns: [table.principal, table.sessionId] }),
    // findExpiredLeases: expired leases held over an open turn.
    index("sessions_open_lease_expiry_idx")
      .on(table.leaseExpiresAt)
      .where(sql`${table.openTurnId} is not null`),
  ],
);

export const turns = pgTable(
  "turns",
  {
    principal: text("principal").notNull(),
    sessionId: text("session_id").notNull(),
    turnId: text("turn_id").notNull(),
    sequence: integer("sequence").notNull(),
    status: text("status").$type<TurnStatus>().notNull(),
    mode: text("mode").notNull(),
    stream: boolean("stream").notNull(),
    rounds: jsonb("rounds").$type<TurnRound[]>().notNull(),
    pending: jsonb("pending").$type<PendingToolCalls>(),
    startCursor: jsonb("start_cursor").$type<ConversationCursor>().notNull(),
    toolExecutions: jsonb("tool_executions").$type<ServerToolExecution[]>().notNull(),
    files: jsonb("files").$type<TurnRecord["files"]>().notNull(),
    usage: jsonb("usage").$type<TurnRecord["usage"]>().notNull(),
    llmCallCount: integer("llm_call_count").notNull(),
    error: jsonb("error").$type<NonNullable<TurnRecord["error"]>>(),
    createdAt: timestamptz("created_at").notNull(),
    updatedAt: timestamptz("updated_at").notNull(),
    completedAt: timestamptz("completed_at"),
  },
  (table) => [
    primaryKey({ name: "turns_pkey", columns: [table.principal, table.sessionId, table.turnId] }),
    // listTurns: a session's turns by sequence.
    index("turns_sequence_idx").on(table.principal, table.sessionId, table.sequence),
  ],
);

/** A session's transcript, one row per position; the primary key serves `position < n` reads and tail deletes. */
export const transcriptItems = pgTable(
  "transcript_items",
  {
    principal: text("principal").notNull(),
    sessionId: text("session_id").notNull(),
    position: integer("position").notNull(),
    item: jsonb("item").$type<TranscriptItem>().notNull(),
  },
  (table) => [
    primaryKey({
      name: "transcript_items_pkey",
      columns: [table.principal, table.sessionId, table.position],
    }),
  ],
);

/** The composition trace: one row per LLM call of a turn. */
export const llmCalls = pgTable(
  "llm_calls",
  {
    principal: text("principal").notNull(),
    sessionId: text("session_id").notNull(),
    turnId: text("turn_id").notNull(),
    callIndex: integer("call_index").notNull(),
    request: jsonb("request").$type<LlmCallRecord["request"]>().notNull(),
    response: jsonb("response").$type<NonNullable<LlmCallRecord["response"]>>(),
    providerRequest: jsonb("provider_request").$type<unknown>(),
    providerResponse: jsonb("provider_response").$type<unknown>(),
    error: jsonb("error").$type<NonNullable<LlmCallRecord["error"]>>(),
    startedAt: timestamptz("started_at").notNull(),
    durationMs: doublePrecision("duration_ms").notNull(),
  },
  (table) => [
    primaryKey({
      name: "llm_calls_pkey",
      columns: [table.principal, table.sessionId, table.turnId, table.callIndex],
    }),
  ],
);

/** Mode transitions (AGN-011 §3.2), in the order they were recorded (`id`). */
export const modeHistory = pgTable(
  "mode_history",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    principal: text("principal").notNull(),
    sessionId: text("session_id").notNull(),
    turnId: text("turn_id").notNull(),
    previousMode: text("previous_mode").notNull(),
    newMode: text("new_mode").notNull(),
    reason: text("reason").notNull(),
    changedBy: text("changed_by").notNull(),
    changedAt: timestamptz("changed_at").notNull(),
  },
  (table) => [index("mode_history_session_idx").on(table.principal, table.sessionId, table.id)],
);

/**
 * Files the agent produced. Keyed by (principal, fileId), like the in-memory store: another principal's id
 * answers exactly as an unknown one, and two principals can never collide on an id.
 */
export const files = pgTable(
  "files",
  {
    principal: text("principal").notNull(),
    fileId: text("file_id").notNull(),
    name: text("name").notNull(),
    mimeType: text("mime_type").notNull(),
    sizeBytes: bigint("size_bytes", { mode: "number" }).notNull(),
    contentHash: text("content_hash").notNull(),
    content: bytea("content").notNull(),
    createdAt: timestamptz("created_at").notNull(),
    expiresAt: timestamptz("expires_at"),
  },
  (table) => [primaryKey({ name: "files_pkey", columns: [table.principal, table.fileId] })],
);

/** Text deltas of streamed turns, for clients that resume from `Last-Event-ID`; the key serves every read. */
export const turnEvents = pgTable(
  "turn_events",
  {
    principal: text("principal").notNull(),
    sessionId: text("session_id").notNull(),
    turnId: text("turn_id").notNull(),
    round: integer("round").notNull(),
    seq: integer("seq").notNull(),
    delta: text("delta").notNull(),
  },
  (table) => [
    primaryKey({
      name: "turn_events_pkey",
      columns: [table.principal, table.sessionId, table.turnId, table.round, table.seq],
    }),
  ],
);
