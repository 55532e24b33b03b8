import type { SumSessionUsageInput, SumUsageInput, UsageEntry, UsageStore, UsageSum } from "@aptix/core";
import { type AnyColumn, and, asc, eq, gt, gte, inArray, lt, type SQL, sql } from "drizzle-orm";
import { llmUsage, usageDays, usageSessionDays } from "../schema.js";
import { usageRow, usageWrite } from "./llm-call-writes.js";
import { rowsJson, type StoreDatabase } from "./rows.js";

/** A column's sum as a number: Postgres sums integers as `bigint` or `numeric`, which the drivers answer as text. */
function total(column: AnyColumn): SQL<number> {
  return sql<number>`sum(${column})`.mapWith(Number);
}

/** The sums of a roll-up table's rows (or of `llm_usage`'s calls, counted). */
function sums(table: typeof usageDays | typeof usageSessionDays) {
  return {
    provider: table.provider,
    model: table.model,
    inputTokens: total(table.inputTokens),
    cachedInputTokens: total(table.cachedInputTokens),
    outputTokens: total(table.outputTokens),
    reasoningTokens: total(table.reasoningTokens),
    llmCalls: total(table.llmCalls),
  };
}

/** A time as the UTC date the roll-ups key it by. */
function dayOf(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/** Session ids compared and ordered by their bytes, as the core's report pages them (not by the locale's rules). */
const sessionOrder = sql`${usageSessionDays.sessionId} collate "C"`;

/**
 * A principal's usage: kept once per call in `llm_usage`, whose insert trigger adds it to the daily roll-ups
 * (`usage_days`, `usage_session_days`) that every report and budget reads, so a read is bounded by days and
 * models, never by calls.
 */
export class DrizzleUsageStore implements UsageStore {
  readonly #db: StoreDatabase;

  constructor(db: StoreDatabase) {
    this.#db = db;
  }

  async recordUsage(entries: readonly UsageEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await usageWrite(this.#db, "usage", sql`true`).execute({
      usage: rowsJson(llmUsage, entries.map(usageRow)),
    });
  }

  async sumUsage({ principal, from, to, groupBy, page }: SumUsageInput): Promise<UsageSum[]> {
    if (groupBy !== "session") {
      const key = groupBy === "day" ? sql<string>`${usageDays.day}::text` : sql<string>`${usageDays.model}`;
      return this.#db
        .select({ key, ...sums(usageDays) })
        .from(usageDays)
        .where(
          and(
            eq(usageDays.principal, principal),
            gte(usageDays.day, dayOf(from)),
            lt(usageDays.day, dayOf(to)),
          ),
        )
        .groupBy(key, usageDays.provider, usageDays.model);
    }
    const inRange = and(
      eq(usageSessionDays.principal, principal),
      gte(usageSessionDays.day, dayOf(from)),
      lt(usageSessionDays.day, dayOf(to)),
    );
    let sessions: string[] | undefined;
    if (page !== undefined) {
      // The page's sessions first: an index range scan from the cursor that stops after `limit` sessions.
      const rows = await this.#db
        .selectDistinct({ sessionId: sql<string>`${sessionOrder}` })
        .from(usageSessionDays)
        .where(and(inRange, page.after === undefined ? undefined : gt(sessionOrder, page.after)))
        .orderBy(asc(sessionOrder))
        .limit(page.limit);
      sessions = rows.map((row) => row.sessionId);
      if (sessions.length === 0) return [];
    }
    return this.#db
      .select({ key: usageSessionDays.sessionId, ...sums(usageSessionDays) })
      .from(usageSessionDays)
      .where(and(inRange, sessions === undefined ? undefined : inArray(usageSessionDays.sessionId, sessions)))
      .groupBy(usageSessionDays.sessionId, usageSessionDays.provider, usageSessionDays.model);
  }

  async sumSessionUsage({ principal, sessionId, since }: SumSessionUsageInput): Promise<UsageSum[]> {
    return this.#db
      .select({
        key: llmUsage.model,
        provider: llmUsage.provider,
        model: llmUsage.model,
        inputTokens: total(llmUsage.inputTokens),
        cachedInputTokens: total(llmUsage.cachedInputTokens),
        outputTokens: total(llmUsage.outputTokens),
        reasoningTokens: total(llmUsage.reasoningTokens),
        llmCalls: sql<number>`count(*)`.mapWith(Number),
      })
      .from(llmUsage)
      .where(
        and(
          eq(llmUsage.principal, principal),
          eq(llmUsage.sessionId, sessionId),
          gte(llmUsage.startedAt, since),
        ),
      )
      .groupBy(llmUsage.provider, llmUsage.model);
  }
}
