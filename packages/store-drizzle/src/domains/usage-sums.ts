import type { SumUsageInput, UsageSum } from "@aptix/core";
import { type AnyColumn, and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import { llmUsage } from "../schema.js";
import type { StoreDatabase } from "./rows.js";

/** What each grouping keys a sum by: the UTC date a call started on, its model, or its session. */
const GROUP_KEYS: Record<SumUsageInput["groupBy"], SQL<string>> = {
  day: sql<string>`to_char(${llmUsage.startedAt} at time zone 'UTC', 'YYYY-MM-DD')`,
  model: sql<string>`${llmUsage.model}`,
  session: sql<string>`${llmUsage.sessionId}`,
};

/** A column's sum as a number: Postgres sums integers as `bigint`, which the drivers answer as text. */
function total(column: AnyColumn): SQL<number> {
  return sql<number>`sum(${column})`.mapWith(Number);
}

/** A principal's usage summed over a time range (`llm_usage`, by its principal and start time index). */
export class UsageSums {
  readonly #db: StoreDatabase;

  constructor(db: StoreDatabase) {
    this.#db = db;
  }

  async sumUsage({ principal, from, to, groupBy, sessionId }: SumUsageInput): Promise<UsageSum[]> {
    const key = GROUP_KEYS[groupBy];
    return this.#db
      .select({
        key,
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
          gte(llmUsage.startedAt, from),
          lt(llmUsage.startedAt, to),
          sessionId === undefined ? undefined : eq(llmUsage.sessionId, sessionId),
        ),
      )
      .groupBy(key, llmUsage.provider, llmUsage.model);
  }
}
