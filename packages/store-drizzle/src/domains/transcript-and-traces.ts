import type {
  Clock,
  LlmCallRecord,
  LlmCallWrite,
  RecordLlmCallInput,
  SessionKey,
  TranscriptItem,
} from "@aptix/core";
import { and, asc, eq, getTableColumns, gte, lt, notInArray, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { llmCalls, toolCatalogs, transcriptItems } from "../schema.js";
import { ToolCatalogs, withTools } from "../tool-catalogs.js";
import { holdLease, type LeaseClock, type SessionSet } from "./lease.js";
import {
  keyWhere,
  Refusal,
  type StoreDatabase,
  type StoreTransaction,
  sentPrepared,
  toLlmCall,
  transaction,
} from "./rows.js";

type LlmCallRow = typeof llmCalls.$inferSelect;

/** A session's key as placeholders, for prepared statements. */
const principal = sql.placeholder("principal");
const sessionId = sql.placeholder("sessionId");

function prepared(db: StoreDatabase) {
  const requestTools = alias(toolCatalogs, "request_tools");
  const providerTools = alias(toolCatalogs, "provider_request_tools");
  return {
    loadTranscript: db
      .select({ item: transcriptItems.item })
      .from(transcriptItems)
      .where(
        and(
          eq(transcriptItems.principal, principal),
          eq(transcriptItems.sessionId, sessionId),
          lt(transcriptItems.position, sql.placeholder("length")),
        ),
      )
      .orderBy(asc(transcriptItems.position))
      .prepare("load_transcript"),
    listLlmCalls: db
      .select({ call: llmCalls, requestTools: requestTools.tools, providerTools: providerTools.tools })
      .from(llmCalls)
      .leftJoin(requestTools, eq(requestTools.digest, llmCalls.requestTools))
      .leftJoin(providerTools, eq(providerTools.digest, llmCalls.providerRequestTools))
      .where(
        and(
          eq(llmCalls.principal, principal),
          eq(llmCalls.sessionId, sessionId),
          eq(llmCalls.turnId, sql.placeholder("turnId")),
        ),
      )
      .orderBy(asc(llmCalls.callIndex))
      .prepare("list_llm_calls"),
  };
}

/** What keeping some LLM calls writes: sent in a lease-guarded transaction, and remembered once committed. */
interface CallWrites {
  /** The statements, sent together: none reads what another writes. */
  send(tx: StoreTransaction): Promise<unknown>[];
  /** Records that they committed. */
  committed(): void;
}

/**
 * The transcript and the composition trace of a session: LLM calls (their tool catalogs stored once each, see
 * `ToolCatalogs`) and the transcript progress they made. A call is kept under the session's lease, by
 * `recordLlmCall` alone or with the turn's settlement (`SessionsAndTurns.updateTurn`, through `callWrites`).
 */
export class TranscriptAndTraces {
  readonly #db: StoreDatabase;
  readonly #clock: Clock;
  readonly #leaseClock: LeaseClock;
  readonly #catalogs = new ToolCatalogs();
  readonly #prepared: ReturnType<typeof prepared>;

  constructor(db: StoreDatabase, clock: Clock, leaseClock: LeaseClock) {
    this.#db = db;
    this.#clock = clock;
    this.#leaseClock = leaseClock;
    this.#prepared = prepared(db);
  }

  /** One transaction: renews the lease (the write's guard), then the call, its catalogs and its transcript. */
  async recordLlmCall({ call, progress, lease }: RecordLlmCallInput): Promise<boolean> {
    const key = { principal: call.principal, sessionId: call.sessionId };
    const set: SessionSet = { leaseExpiresAt: this.#leaseClock.now(lease.durationMs) };
    if (progress !== undefined) Object.assign(set, { cursor: progress.cursor, updatedAt: this.#clock.now() });
    const writes = this.callWrites(key, [{ call, progress }]);
    const written = await transaction(this.#db, async (tx) => {
      if (!(await holdLease(tx, key, lease.owner, set))) throw new Refusal(false);
      await Promise.all(writes.send(tx));
      return true;
    });
    if (written) writes.committed();
    return written;
  }

  /**
   * The writes that keep `calls` of the session `key`, in order: each call's trace (replacing one kept before
   * under its index), the tool catalogs not known stored, and the transcript their progress leaves (each
   * progress replaces every item from its position on).
   */
  callWrites(key: SessionKey, calls: readonly LlmCallWrite[]): CallWrites {
    if (calls.length === 0) return { send: () => [], committed: () => {} };
    const catalogs = new Map<string, string>();
    const rows = calls.map(({ call }) => this.#callRow(call, catalogs));
    const transcript = mergedTranscript(calls);
    return {
      send: (tx) => [
        sentPrepared(
          tx
            .insert(llmCalls)
            .values(rows)
            .onConflictDoUpdate({
              target: [llmCalls.principal, llmCalls.sessionId, llmCalls.turnId, llmCalls.callIndex],
              set: excluded(CALL_VALUE_COLUMNS),
            }),
        ),
        ...(catalogs.size === 0
          ? []
          : [
              tx
                .insert(toolCatalogs)
                .values([...catalogs].map(([digest, tools]) => ({ digest, tools: sql`${tools}::jsonb` })))
                .onConflictDoNothing(),
            ]),
        ...(transcript === undefined ? [] : transcriptWrites(tx, key, transcript)),
      ],
      committed: () => this.#catalogs.stored(catalogs.keys()),
    };
  }

  async loadTranscript(key: SessionKey, length: number): Promise<TranscriptItem[]> {
    const rows = await this.#prepared.loadTranscript.execute({ ...keyOf(key), length });
    return rows.map((row) => row.item);
  }

  async listLlmCalls(key: SessionKey, turnId: string): Promise<LlmCallRecord[]> {
    const rows = await this.#prepared.listLlmCalls.execute({ ...keyOf(key), turnId });
    return rows.map(({ call, requestTools, providerTools }) =>
      toLlmCall({
        ...call,
        request: withTools(call.request, requestTools) as LlmCallRow["request"],
        providerRequest: withTools(call.providerRequest, providerTools),
      }),
    );
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
      request: request.payload as LlmCallRow["request"],
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

/** A key's two columns alone, as the prepared statements' placeholders name them. */
export function keyOf(key: SessionKey): { principal: string; sessionId: string } {
  return { principal: key.principal, sessionId: key.sessionId };
}

/** A call's columns besides its key, which a call kept again under the same index replaces. */
const {
  principal: _p,
  sessionId: _s,
  turnId: _t,
  callIndex: _i,
  ...CALL_VALUE_COLUMNS
} = getTableColumns(llmCalls);

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

/** Deletes the items from `floor` on that are not written again, and upserts the written ones. */
function transcriptWrites(tx: StoreTransaction, key: SessionKey, { floor, items }: MergedTranscript) {
  const positions = items.map(([position]) => position);
  const stale = and(
    keyWhere(transcriptItems, key),
    gte(transcriptItems.position, floor),
    positions.length === 0 ? undefined : notInArray(transcriptItems.position, positions),
  );
  return [
    tx.delete(transcriptItems).where(stale),
    ...(items.length === 0
      ? []
      : [
          tx
            .insert(transcriptItems)
            .values(items.map(([position, item]) => ({ ...keyOf(key), position, item })))
            .onConflictDoUpdate({
              target: [transcriptItems.principal, transcriptItems.sessionId, transcriptItems.position],
              set: { item: sql`excluded.${sql.identifier(transcriptItems.item.name)}` },
            }),
        ]),
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
