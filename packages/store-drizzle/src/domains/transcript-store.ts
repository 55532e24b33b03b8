import type {
  CompactionRecord,
  LlmCallRecord,
  PruneTracesInput,
  SessionKey,
  TranscriptItem,
  TranscriptStore,
} from "@aptix/core";
import { and, asc, eq, gte, isNotNull, lt, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { compactions, llmCalls, toolCatalogs, transcriptItems } from "../schema.js";
import { withTools } from "../tool-catalogs.js";
import { keyOf, type StoreDatabase, toLlmCall } from "./rows.js";

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
          gte(transcriptItems.position, sql.placeholder("from")),
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

/**
 * The transcript and the composition trace of a session, as read back (the turn store writes them, see
 * `LlmCallWrites`), and the trace retention.
 */
export class DrizzleTranscriptStore implements TranscriptStore {
  readonly #db: StoreDatabase;
  readonly #prepared: ReturnType<typeof prepared>;

  constructor(db: StoreDatabase) {
    this.#db = db;
    this.#prepared = prepared(db);
  }

  async loadTranscript(key: SessionKey, length: number, from = 0): Promise<TranscriptItem[]> {
    const rows = await this.#prepared.loadTranscript.execute({ ...keyOf(key), length, from });
    return rows.map((row) => row.item);
  }

  async listCompactions(key: SessionKey): Promise<CompactionRecord[]> {
    const rows = await this.#db
      .select()
      .from(compactions)
      .where(and(eq(compactions.principal, key.principal), eq(compactions.sessionId, key.sessionId)))
      .orderBy(asc(compactions.fromPosition));
    return rows.map(({ fromPosition, ...row }) => ({ ...row, fromPosition }));
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
}
