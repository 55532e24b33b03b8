/**
 * The drizzle schema of the Aptix store. Tables are declared without a Postgres schema (plain `pgTable`), so
 * drizzle-kit writes unqualified SQL and the store places every table in the schema it is opened with, through
 * the connection's `search_path`. `drizzle-kit generate` (`pnpm --filter @aptix/store-drizzle db:generate`)
 * turns changes here into a migration under `drizzle/`; a test fails when the two drift.
 *
 * Keep this module free of runtime imports other than drizzle-orm: drizzle-kit loads it on its own.
 */
import type {
  CompactionReason,
  ConversationCursor,
  LlmCallRecord,
  PendingToolCalls,
  ServerToolExecution,
  TranscriptItem,
  TurnRecord,
  TurnRound,
  TurnStatus,
} from "@aptix/core";
import { type SQL, sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  customType,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  real,
  text,
  timestamp,
  uniqueIndex,
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
    /** Goes up by one with every write to the row or to one of the session's turns (`SessionRecord.version`). */
    version: integer("version").notNull().default(0),
    /** Null when no lease is held (never claimed, or released); set and cleared together with the expiry. */
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: timestamptz("lease_expires_at"),
    /**
     * For the session list, kept as turns start so a page reads no turn: the first 256 characters of the first
     * user instruction, and the workspace the latest turn naming one named.
     */
    firstInstruction: text("first_instruction"),
    workspaceId: text("workspace_id"),
    /** A fork's source session, and the turn it was forked before (null: after its last). */
    forkedFromSessionId: text("forked_from_session_id"),
    forkedFromTurnId: text("forked_from_turn_id"),
    createdAt: timestamptz("created_at").notNull(),
    updatedAt: timestamptz("updated_at").notNull(),
  },
  (table) => [
    primaryKey({ name: "sessions_pkey", columns: [table.principal, table.sessionId] }),
    // The session list's order (newest first, then by id) and its cursor, a principal's page at a time. On
    // `principal || ''`, which only the list names, so that no planner reads it for a lookup by key. The lease,
    // cursor, open turn and counter stay unindexed, so the writes that change only them are HOT; a write that
    // changes `updated_at` (a turn's start and settlement) updates this index too.
    index("sessions_principal_updated_idx").on(
      sql`(${table.principal} || '')`,
      table.updatedAt,
      sql`${table.sessionId} collate "C"`,
    ),
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
    // Every read of one turn goes by the key, all three columns given.
    primaryKey({ name: "turns_pkey", columns: [table.principal, table.sessionId, table.turnId] }),
    // A session's turns in order (a page of messages, the session list's latest turn) without reading its every
    // turn. On `principal || ''` and `session_id || ''`, which only those reads name: an index starting with the
    // plain key columns was chosen for a turn's lookup by key too, reading the session's every turn.
    index("turns_session_sequence_idx").on(
      sql`(${table.principal} || '')`,
      sql`(${table.sessionId} || '')`,
      table.sequence,
    ),
    // findExpiredLeases: the few running turns, whose sessions' leases may have lapsed.
    index("turns_running_idx").on(table.createdAt).where(sql`${table.status} = 'running'`),
    // The claim's running-turn cap (migration 0007's `aptix_at_running_cap`): a principal's running turns, and
    // never its ended ones. On `principal || ''`, which the primary key cannot serve, so that no planner (on a
    // small table, or without statistics) prefers the primary key's range over the principal's every turn.
    index("turns_running_principal_idx")
      .on(sql`(${table.principal} || '')`)
      .where(sql`${table.status} = 'running'`),
    // A session's queued turns in order (the next to start, how many wait), and the sessions that have any.
    index("turns_queued_idx")
      .on(table.principal, table.sessionId, table.sequence)
      .where(sql`${table.status} = 'queued'`),
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

/**
 * A traced call's request, named here: a type alias would be expanded in the table's declared type, which would
 * then have to name core's module-private `TracedContinuation`, which a declaration file cannot.
 */
interface TracedRequest extends NonNullable<LlmCallRecord["request"]> {}

/** The composition trace: one row per LLM call of a turn. */
export const llmCalls = pgTable(
  "llm_calls",
  {
    principal: text("principal").notNull(),
    sessionId: text("session_id").notNull(),
    turnId: text("turn_id").notNull(),
    callIndex: integer("call_index").notNull(),
    /** The call's own id (its usage row's key); null on calls kept before it was recorded. */
    callId: text("call_id"),
    /** The provider called; null on calls kept before it was recorded. */
    provider: text("provider"),
    /** Null once the trace retention dropped it, with the raw payloads (APTIX_TRACE_RETENTION_DAYS). */
    request: jsonb("request").$type<TracedRequest>(),
    response: jsonb("response").$type<NonNullable<LlmCallRecord["response"]>>(),
    providerRequest: jsonb("provider_request").$type<unknown>(),
    providerResponse: jsonb("provider_response").$type<unknown>(),
    /** `request`'s tool catalog, kept in `tool_catalogs` by this digest and left out of `request`. */
    requestTools: text("request_tools"),
    /** The same for `provider_request`. */
    providerRequestTools: text("provider_request_tools"),
    error: jsonb("error").$type<NonNullable<LlmCallRecord["error"]>>(),
    startedAt: timestamptz("started_at").notNull(),
    durationMs: doublePrecision("duration_ms").notNull(),
  },
  (table) => [
    primaryKey({
      name: "llm_calls_pkey",
      columns: [table.principal, table.sessionId, table.turnId, table.callIndex],
    }),
    // The trace retention's: calls not pruned yet, oldest first.
    index("llm_calls_unpruned_started_idx").on(table.startedAt).where(sql`${table.request} is not null`),
  ],
);

/**
 * Tool catalogs of LLM calls, each stored once by the SHA-256 of its JSON text: every call of a mode sends the
 * same catalog, often the larger part of its trace, so a call keeps only the digest (`tool-catalogs.ts`).
 */
export const toolCatalogs = pgTable("tool_catalogs", {
  digest: text("digest").primaryKey(),
  tools: jsonb("tools").$type<unknown[]>().notNull(),
});

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
    /** The turn whose server tool produced it (`StoredFile.producedBy`); null for files kept otherwise. */
    sessionId: text("session_id"),
    turnId: text("turn_id"),
  },
  (table) => [
    primaryKey({ name: "files_pkey", columns: [table.principal, table.fileId] }),
    // A session's files, deleted with it; the files of a failed turn, for their sweep.
    index("files_turn_idx")
      .on(table.principal, table.sessionId, table.turnId)
      .where(sql`${table.sessionId} is not null`),
    // The retention sweep's `expires_at <= now()`; files that never expire are not indexed.
    index("files_expires_at_idx").on(table.expiresAt).where(sql`${table.expiresAt} is not null`),
  ],
);

/**
 * The sessions besides a file's producing one (`files.session_id`) whose turns, copied by a fork, name it: the
 * file is shared, not copied, and goes to one of them when its session is deleted. Deleted with the holding
 * session, and by the file store with the file.
 */
export const fileHolders = pgTable(
  "file_holders",
  {
    principal: text("principal").notNull(),
    fileId: text("file_id").notNull(),
    sessionId: text("session_id").notNull(),
  },
  (table) => [
    primaryKey({ name: "file_holders_pkey", columns: [table.principal, table.fileId, table.sessionId] }),
    // A deleted session's holdings.
    index("file_holders_session_idx").on(table.principal, table.sessionId),
  ],
);

/** A session's compactions (docs/context-window.md): the summary that replaced its turns for the provider, by position. */
export const compactions = pgTable(
  "compactions",
  {
    principal: text("principal").notNull(),
    sessionId: text("session_id").notNull(),
    /** The transcript position of the compacted chain's first item: a compaction run again replaces its row. */
    fromPosition: integer("from_position").notNull(),
    turnId: text("turn_id").notNull(),
    reason: text("reason").$type<CompactionReason>().notNull(),
    summary: text("summary").notNull(),
    tokensBefore: integer("tokens_before").notNull(),
    tokensAfter: integer("tokens_after").notNull(),
    createdAt: timestamptz("created_at").notNull(),
  },
  (table) => [
    primaryKey({ name: "compactions_pkey", columns: [table.principal, table.sessionId, table.fromPosition] }),
  ],
);

/**
 * Each successful LLM call's usage (docs/http-api.md), kept with its call's trace in the same statement but apart from
 * it: a deleted session's usage still counts against its principal's budgets and shows in its usage. Read by
 * principal and time (`GET /v1/usage`, the budgets) and by session (the session view).
 */
export const llmUsage = pgTable(
  "llm_usage",
  {
    /** The call's own id: a row is inserted once under it and never changed. */
    callId: text("call_id").primaryKey(),
    principal: text("principal").notNull(),
    /** Null for a call outside any session (embedding pushed documents). */
    sessionId: text("session_id"),
    turnId: text("turn_id"),
    callIndex: integer("call_index"),
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    inputTokens: integer("input_tokens").notNull(),
    cachedInputTokens: integer("cached_input_tokens").notNull(),
    outputTokens: integer("output_tokens").notNull(),
    reasoningTokens: integer("reasoning_tokens").notNull(),
    startedAt: timestamptz("started_at").notNull(),
  },
  (table) => [
    // A session's usage since it was made under its key: the session view's.
    index("llm_usage_session_started_idx").on(table.principal, table.sessionId, table.startedAt),
  ],
);

/** The sums a daily roll-up keeps of the calls it counts. */
function usageSums() {
  return {
    inputTokens: bigint("input_tokens", { mode: "number" }).notNull(),
    cachedInputTokens: bigint("cached_input_tokens", { mode: "number" }).notNull(),
    outputTokens: bigint("output_tokens", { mode: "number" }).notNull(),
    reasoningTokens: bigint("reasoning_tokens", { mode: "number" }).notNull(),
    llmCalls: bigint("llm_calls", { mode: "number" }).notNull(),
  };
}

/**
 * A principal's usage by UTC day, provider and model: what usage reports by day or model and every budget read,
 * at most a row per day and model whatever the number of calls. Kept by a trigger on `llm_usage` inserts, in
 * the statement that inserts the calls (the migration `0013_usage_history` defines it).
 */
export const usageDays = pgTable(
  "usage_days",
  {
    principal: text("principal").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    ...usageSums(),
  },
  (table) => [
    primaryKey({
      name: "usage_days_pkey",
      columns: [table.principal, table.day, table.provider, table.model],
    }),
  ],
);

/**
 * The same by session too ("" for calls outside any session): what usage reports by session read, a page of
 * sessions in id order, each at most a row per day and model. Kept by the same trigger.
 */
export const usageSessionDays = pgTable(
  "usage_session_days",
  {
    principal: text("principal").notNull(),
    sessionId: text("session_id").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    ...usageSums(),
  },
  (table) => [
    primaryKey({
      name: "usage_session_days_pkey",
      columns: [table.principal, table.sessionId, table.day, table.provider, table.model],
    }),
    // A page of a principal's sessions, in the byte order of their ids whatever the database's collation, from
    // the cursor on: the page read stops after its sessions.
    index("usage_session_days_page_idx").on(table.principal, sql`${table.sessionId} collate "C"`, table.day),
  ],
);

/**
 * Secrets made once per database (per store schema) and shared by every instance on it: the prompt-cache key's
 * when `APTIX_CACHE_KEY_SECRET` is unset. The first instance to need one inserts it; the others read it.
 */
export const deploymentSecrets = pgTable("deployment_secrets", {
  name: text("name").primaryKey(),
  secret: bytea("secret").notNull(),
  createdAt: timestamptz("created_at").notNull(),
});

/**
 * The responses a provider keeps (OpenAI with `store: true`) of deleted sessions, to delete there: written with
 * the session's deletion, taken by the housekeeping when due, and retried with a growing delay until the
 * provider confirms (docs/security.md, delete means gone).
 */
export const responseDeletions = pgTable(
  "response_deletions",
  {
    provider: text("provider").notNull(),
    responseId: text("response_id").notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamptz("next_attempt_at").notNull(),
  },
  (table) => [
    primaryKey({ name: "response_deletions_pkey", columns: [table.provider, table.responseId] }),
    index("response_deletions_due_idx").on(table.nextAttemptAt),
  ],
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
    /** Null for a delta or a reset; `context.compacted` for a compaction, with its data as JSON in `delta`. */
    event: text("event"),
  },
  (table) => [
    primaryKey({
      name: "turn_events_pkey",
      columns: [table.principal, table.sessionId, table.turnId, table.round, table.seq],
    }),
  ],
);

/** `tsvector`, only ever written by Postgres (a generated column) and never read back. */
const tsvector = customType<{ data: string }>({
  dataType() {
    return "tsvector";
  },
});

/**
 * A principal's workspace index (docs/knowledge.md), named like a session by (principal, workspaceId); the
 * surrogate `id` keeps the rows below it short. The four workspace tables have no foreign keys (drizzle-kit
 * would qualify them with the `public` schema): the index deletes a document's chunks and embeddings itself.
 */
export const workspaces = pgTable(
  "workspaces",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    principal: text("principal").notNull(),
    workspaceId: text("workspace_id").notNull(),
    updatedAt: timestamptz("updated_at").notNull(),
    /** Chunks in the workspace, and the terms of their texts added up: BM25's N and average length. */
    chunkCount: integer("chunk_count").notNull().default(0),
    termTotal: bigint("term_total", { mode: "number" }).notNull().default(0),
  },
  (table) => [uniqueIndex("workspaces_key_idx").on(table.principal, table.workspaceId)],
);

/** One pushed document per (workspace, path), with the hash that decides whether a push re-chunks it. */
export const workspaceDocuments = pgTable(
  "workspace_documents",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    workspace: bigint("workspace", { mode: "number" }).notNull(),
    path: text("path").notNull(),
    contentHash: text("content_hash").notNull(),
    language: text("language").notNull(),
    repo: text("repo"),
    tags: jsonb("tags").$type<string[]>().notNull(),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull(),
    /** The pushed contents' bytes, counted against APTIX_QUOTA_WORKSPACE_BYTES (0 for documents pushed before). */
    sizeBytes: bigint("size_bytes", { mode: "number" }).notNull().default(0),
  },
  (table) => [uniqueIndex("workspace_documents_path_idx").on(table.workspace, table.path)],
);

/**
 * A document's chunks. `search_vector` is what lexical search matches and ranks: the code-aware terms of the
 * path (weight A, so a path term counts more than one in the text) and of the text (weight D), both written by
 * core's `codeSearchText`, read by the `simple` configuration (no stemming, no stop words: identifiers stay as
 * they are). `workspace` repeats the document's, so a search filters chunks without a join first; it has no
 * index of its own, which the planner would prefer to the GIN index when one workspace holds most chunks.
 */
export const workspaceChunks = pgTable(
  "workspace_chunks",
  {
    chunkId: text("chunk_id").primaryKey(),
    document: bigint("document", { mode: "number" }).notNull(),
    workspace: bigint("workspace", { mode: "number" }).notNull(),
    startLine: integer("start_line").notNull(),
    endLine: integer("end_line").notNull(),
    text: text("text").notNull(),
    pathSearchText: text("path_search_text").notNull(),
    searchText: text("search_text").notNull(),
    /** Terms in `search_text`: the chunk's length for BM25. */
    termCount: integer("term_count").notNull(),
    searchVector: tsvector("search_vector")
      .notNull()
      .generatedAlwaysAs(
        (): SQL =>
          sql`setweight(to_tsvector('simple'::regconfig, ${workspaceChunks.pathSearchText}), 'A') || to_tsvector('simple'::regconfig, ${workspaceChunks.searchText})`,
      ),
  },
  (table) => [
    index("workspace_chunks_document_idx").on(table.document),
    index("workspace_chunks_search_idx").using("gin", table.searchVector),
  ],
);

/**
 * Chunk embeddings per model. A `real[]` rather than pgvector's `vector`, so this table (and every migration)
 * works on a Postgres without pgvector; vector search casts to `vector` and needs the extension only then.
 */
export const workspaceEmbeddings = pgTable(
  "workspace_embeddings",
  {
    chunkId: text("chunk_id").notNull(),
    model: text("model").notNull(),
    embedding: real("embedding").array().notNull(),
  },
  (table) => [primaryKey({ name: "workspace_embeddings_pkey", columns: [table.chunkId, table.model] })],
);

/**
 * Each term's document frequency per workspace: in how many chunks it occurs (text or path), kept up to date by
 * every write, so a search reads BM25's inverse document frequencies by key rather than counting matches.
 */
export const workspaceTerms = pgTable(
  "workspace_terms",
  {
    workspace: bigint("workspace", { mode: "number" }).notNull(),
    term: text("term").notNull(),
    chunks: integer("chunks").notNull(),
  },
  (table) => [primaryKey({ name: "workspace_terms_pkey", columns: [table.workspace, table.term] })],
);

/**
 * The webhook outbox: one row per event and webhook, written in the same statement as the transition that made
 * the event; taken by any instance when due (`due_at`) and not claimed (or its claim expired), removed once
 * delivered or given up. `body` is the exact JSON every attempt sends.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    deliveryId: text("delivery_id").primaryKey(),
    target: text("target").notNull(),
    body: text("body").notNull(),
    attempts: integer("attempts").notNull(),
    dueAt: timestamptz("due_at").notNull(),
    claimant: text("claimant"),
    claimedUntil: timestamptz("claimed_until"),
  },
  (table) => [index("webhook_deliveries_due_idx").on(table.dueAt)],
);
