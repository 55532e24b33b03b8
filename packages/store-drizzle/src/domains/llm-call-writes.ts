import type { CompactionRecord, LlmCallRecord, LlmCallWrite, TranscriptItem } from "@aptix/core";
import { type UsageEntry, usageOf } from "@aptix/core";
import { and, eq, getTableColumns, gte, type SQL, sql } from "drizzle-orm";
import { compactions, llmCalls, llmUsage, toolCatalogs, transcriptItems } from "../schema.js";
import { ToolCatalogs } from "../tool-catalogs.js";
import { rowsJson, rowsWhere, type StoreDatabase, type Write } from "./rows.js";

/** What keeping some LLM calls writes: sent with a lease guard, and remembered once committed. */
interface CallWrites {
  /** The writes, each made where `held` holds (the session's key in the placeholders `principal`, `sessionId`). */
  writes(held: SQL): Write[];
  /** Their placeholders' values. */
  values: Record<string, unknown>;
  /** Which writes they are: a part of the statement's shape. */
  shape: string;
  /** Records that they committed. */
  committed(): void;
}

/**
 * The writes that keep LLM calls (their tool catalogs stored once each, see `ToolCatalogs`) and the transcript
 * progress they made: sent by the turn store under the session's lease, by `recordLlmCall` alone or with the
 * turn's settlement (a lease-guarded `DrizzleTurnStore.write`).
 */
export class LlmCallWrites {
  readonly #db: StoreDatabase;
  readonly #catalogs = new ToolCatalogs();

  constructor(db: StoreDatabase) {
    this.#db = db;
  }

  /**
   * The writes that keep `calls` of one session, in order: each call's trace (replacing one kept before under
   * its index), its usage (once under its id), the tool catalogs not known stored, and the transcript their progress leaves (each progress
   * replaces every item from its position on).
   */
  callWrites(calls: readonly LlmCallWrite[]): CallWrites {
    if (calls.length === 0) return { writes: () => [], values: {}, shape: "", committed: () => {} };
    const catalogs = new Map<string, string>();
    const rows = calls.map(({ call }) => this.#callRow(call, catalogs));
    const transcript = mergedTranscript(calls);
    const kept = calls.flatMap(({ compaction }) => (compaction ? [compactionRow(compaction)] : []));
    const usage = calls.flatMap(({ call }) => usageRows(call));
    const values: Record<string, unknown> = { calls: rowsJson(llmCalls, rows) };
    if (usage.length > 0) values.usage = rowsJson(llmUsage, usage);
    if (kept.length > 0) values.compactions = rowsJson(compactions, kept);
    if (catalogs.size > 0) {
      // Each catalog's text is JSON already: spliced in, not parsed to be written again.
      values.catalogs = `[${[...catalogs].map(([digest, tools]) => `{"digest":${JSON.stringify(digest)},"tools":${tools}}`).join(",")}]`;
    }
    if (transcript !== undefined) {
      values.transcriptFloor = transcript.floor;
      values.transcriptPositions = JSON.stringify(transcript.items.map(([position]) => position));
      values.transcriptItems = JSON.stringify(
        transcript.items.map(([position, item]) => ({ position, item })),
      );
    }
    return {
      writes: (held) => [
        keptByCall(this.#db, llmCalls, "calls", held),
        ...(usage.length === 0 ? [] : [usageWrite(this.#db, "usage", held)]),
        ...(catalogs.size === 0
          ? []
          : [
              this.#db
                .insert(toolCatalogs)
                .select(rowsWhere(toolCatalogs, "catalogs", held))
                .onConflictDoNothing()
                .returning({ digest: toolCatalogs.digest }),
            ]),
        ...(transcript === undefined ? [] : transcriptWrites(this.#db, held)),
        ...(kept.length === 0
          ? []
          : [
              // A compaction run again (its round rerun) replaces the one of the same position.
              this.#db
                .insert(compactions)
                .select(rowsWhere(compactions, "compactions", held))
                .onConflictDoUpdate({
                  target: [compactions.principal, compactions.sessionId, compactions.fromPosition],
                  set: excluded(COMPACTION_VALUE_COLUMNS),
                })
                .returning({ turnId: compactions.turnId }),
            ]),
      ],
      values,
      shape: `calls${usage.length > 0 ? "+usage" : ""}${catalogs.size > 0 ? "+catalogs" : ""}${transcript === undefined ? "" : "+transcript"}${kept.length > 0 ? "+compaction" : ""}`,
      committed: () => this.#catalogs.stored(catalogs.keys()),
    };
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
      callId: call.callId,
      provider: call.provider ?? null,
      request: request.payload as (typeof llmCalls.$inferSelect)["request"],
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
}

/**
 * Writes the trace rows of calls from the placeholder `name` where `held` holds: a call kept again under the same
 * index (its round run again) replaces every column besides the key.
 */
function keptByCall(db: StoreDatabase, table: typeof llmCalls, name: string, held: SQL): Write {
  const { principal: _p, sessionId: _s, turnId: _t, callIndex: _i, ...values } = getTableColumns(table);
  return db
    .insert(table)
    .select(rowsWhere(table, name, held))
    .onConflictDoUpdate({
      target: [table.principal, table.sessionId, table.turnId, table.callIndex],
      set: excluded(values),
    })
    .returning({ turnId: table.turnId });
}

/**
 * Inserts the usage rows in the placeholder `name` where `condition` holds, each once under its call's id: one
 * kept already stays as it was. The insert's trigger adds them to the daily roll-ups in the same statement.
 */
export function usageWrite(db: StoreDatabase, name: string, condition: SQL) {
  return db
    .insert(llmUsage)
    .select(rowsWhere(llmUsage, name, condition))
    .onConflictDoNothing({ target: llmUsage.callId })
    .returning({ callId: llmUsage.callId });
}

/** The usage row a call adds: none for a call without usage. */
function usageRows(call: LlmCallRecord): (typeof llmUsage.$inferInsert)[] {
  const usage = usageOf(call);
  return usage === undefined ? [] : [usageRow(usage)];
}

/** `excluded.<column>` for each column: in an upsert, the values of the row that conflicted. */
function excluded(columns: Record<string, { name: string }>): Record<string, SQL> {
  return Object.fromEntries(
    Object.entries(columns).map(([key, column]) => [key, sql`excluded.${sql.identifier(column.name)}`]),
  );
}

/** The transcript that calls' progress leaves: the items to keep by position, and the first position written. */
interface MergedTranscript {
  floor: number;
  items: [number, TranscriptItem][];
}

/**
 * Deletes the session's items from the placeholder `transcriptFloor` on that are not written again (positions in
 * `transcriptPositions`), and upserts the written ones (`transcriptItems`), where `held`.
 */
function transcriptWrites(db: StoreDatabase, held: SQL): Write[] {
  const theSession = and(
    eq(transcriptItems.principal, sql.placeholder("principal")),
    eq(transcriptItems.sessionId, sql.placeholder("sessionId")),
  );
  const written = sql`select jsonb_array_elements_text(${sql.placeholder("transcriptPositions")}::jsonb)::integer`;
  return [
    db
      .delete(transcriptItems)
      .where(
        and(
          theSession,
          gte(transcriptItems.position, sql.placeholder("transcriptFloor")),
          sql`${transcriptItems.position} <> all (${written})`,
          held,
        ),
      )
      .returning({ position: transcriptItems.position }),
    db
      .insert(transcriptItems)
      .select(
        sql`select ${sql.placeholder("principal")}, ${sql.placeholder("sessionId")}, r.position, r.item from jsonb_to_recordset(${sql.placeholder("transcriptItems")}::jsonb) as r(position integer, item jsonb) where ${held}`,
      )
      .onConflictDoUpdate({
        target: [transcriptItems.principal, transcriptItems.sessionId, transcriptItems.position],
        set: { item: sql`excluded.${sql.identifier(transcriptItems.item.name)}` },
      })
      .returning({ position: transcriptItems.position }),
  ];
}

/** The transcript that calls' progress writes, applied in order (each replaces every item from its position on). */
function mergedTranscript(calls: readonly LlmCallWrite[]): MergedTranscript | undefined {
  let floor: number | undefined;
  const items = new Map<number, TranscriptItem>();
  for (const { progress } of calls) {
    if (progress === undefined) continue;
    floor = Math.min(floor ?? progress.fromPosition, progress.fromPosition);
    for (const position of [...items.keys()]) if (position >= progress.fromPosition) items.delete(position);
    progress.items.forEach((item, offset) => {
      items.set(progress.fromPosition + offset, item);
    });
  }
  return floor === undefined ? undefined : { floor, items: [...items] };
}

/** The columns a compaction run again replaces: all but its key. */
const {
  principal: _cp,
  sessionId: _cs,
  fromPosition: _cf,
  ...COMPACTION_VALUE_COLUMNS
} = getTableColumns(compactions);

function compactionRow(compaction: CompactionRecord): typeof compactions.$inferInsert {
  return { ...compaction, createdAt: new Date(compaction.createdAt) };
}

export function usageRow({ index, ...entry }: UsageEntry): typeof llmUsage.$inferInsert {
  return { ...entry, callIndex: index };
}
