import type { SessionUsage, UsageQuery, UsageReport } from "@aptix/contracts";
import type { UsageStore, UsageSum } from "../ports/usage-store.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { SessionKey } from "../records/session-record.js";
import { usageOf } from "../records/usage-entry.js";
import type { PriceList } from "./price-list.js";
import { utcMonthOf } from "./utc-periods.js";

const DAY_MS = 86_400_000;
const NANOS_PER_USD = 1_000_000_000;
/** A session page's cursor: this, then the last key of the page before (which may be "", see UsageSum). */
const USAGE_CURSOR_PREFIX = "after:";
/** Session buckets per page when the query names no `limit`. */
const DEFAULT_SESSION_PAGE = 100;

/** A range of time: `from` included, `to` excluded. */
export interface TimeRange {
  from: Date;
  to: Date;
}

/** What a principal spent in a range: the budgets' measure (tokens: input and output; USD: priced calls only). */
export interface Spent {
  tokens: number;
  usd: number;
}

interface Totals {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  llmCalls: number;
  /** Undefined once a call of an unpriced model is among them. */
  costNanos: number | undefined;
  /** The nano-dollars of the priced calls alone. */
  pricedNanos: number;
}

const NO_TOTALS: Totals = {
  inputTokens: 0,
  cachedInputTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  llmCalls: 0,
  costNanos: 0,
  pricedNanos: 0,
};

/** How a report groups, and which page of sessions it answers (a query's `limit` and `cursor`). */
export type UsageReportQuery = Pick<UsageQuery, "groupBy" | "limit" | "cursor">;

/**
 * The usage views: a session's usage, a principal's report by group, and what a budget counts. A principal's
 * reads go to the store's daily roll-ups, so they are bounded by days and models, never by calls.
 */
export class UsageReports {
  constructor(
    private readonly store: UsageStore,
    private readonly prices: PriceList,
  ) {}

  /** The range a query names (its dates, both included), or the UTC month of `now`. */
  static rangeOf(query: Pick<UsageQuery, "from" | "to">, now: Date): TimeRange {
    if (query.from !== undefined && query.to !== undefined) {
      return { from: new Date(query.from), to: new Date(Date.parse(query.to) + DAY_MS) };
    }
    return utcMonthOf(now);
  }

  async report(principal: string, range: TimeRange, query: UsageReportQuery): Promise<UsageReport> {
    const { groupBy } = query;
    if (groupBy !== "session") {
      const buckets = this.#buckets(await this.store.sumUsage({ principal, ...range, groupBy }));
      return { buckets: shownBuckets(buckets), total: totalOf(buckets) };
    }
    const limit = query.limit ?? DEFAULT_SESSION_PAGE;
    const after = query.cursor?.slice(USAGE_CURSOR_PREFIX.length);
    const page = { limit: limit + 1, ...(after === undefined ? {} : { after }) };
    const [sessions, models] = await Promise.all([
      this.store.sumUsage({ principal, ...range, groupBy, page }),
      this.store.sumUsage({ principal, ...range, groupBy: "model" }),
    ]);
    const buckets = this.#buckets(sessions);
    const more = buckets.length > limit;
    const shownPage = shownBuckets(buckets.slice(0, limit));
    const total = totalOf(this.#buckets(models));
    return {
      buckets: shownPage,
      total,
      ...(more ? { nextCursor: USAGE_CURSOR_PREFIX + (shownPage.at(-1)?.key ?? "") } : {}),
    };
  }

  /** Every model call of the session made under its key since `since` (its creation), compactions included. */
  async sessionUsage(key: SessionKey, since: Date): Promise<SessionUsage> {
    const sums = await this.store.sumSessionUsage({ ...key, since });
    const totals = sums.reduce((total, sum) => this.#add(total, sum), NO_TOTALS);
    return { ...shown(totals), reasoningTokens: totals.reasoningTokens };
  }

  /**
   * What a turn's calls cost, in USD: null once one of them used an unpriced model, or one whose request the
   * trace retention dropped (its model is no longer known). A failed call reported no usage: it adds nothing.
   */
  turnCostUsd(calls: readonly LlmCallRecord[]): number | null {
    let nanos = 0;
    for (const call of calls) {
      if (call.response === null) continue;
      const usage = usageOf(call);
      const cost = usage && this.prices.costNanos(usage);
      if (cost === undefined) return null;
      nanos += cost;
    }
    return nanos / NANOS_PER_USD;
  }

  async spent(principal: string, range: TimeRange): Promise<Spent> {
    const sums = await this.store.sumUsage({ principal, ...range, groupBy: "model" });
    const totals = sums.reduce((total, sum) => this.#add(total, sum), NO_TOTALS);
    return { tokens: totals.inputTokens + totals.outputTokens, usd: totals.pricedNanos / NANOS_PER_USD };
  }

  /** Sums by key, in key order. */
  #buckets(sums: readonly UsageSum[]): [string, Totals][] {
    const buckets = new Map<string, Totals>();
    for (const sum of sums) buckets.set(sum.key, this.#add(buckets.get(sum.key) ?? NO_TOTALS, sum));
    return [...buckets].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  #add(totals: Totals, sum: UsageSum): Totals {
    const cost = this.prices.costNanos(sum);
    return addTotals(totals, {
      ...sum,
      costNanos: cost,
      pricedNanos: cost ?? 0,
    });
  }
}

function addTotals(a: Totals, b: Totals): Totals {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    llmCalls: a.llmCalls + b.llmCalls,
    costNanos: a.costNanos === undefined || b.costNanos === undefined ? undefined : a.costNanos + b.costNanos,
    pricedNanos: a.pricedNanos + b.pricedNanos,
  };
}

function totalOf(buckets: readonly [string, Totals][]): UsageReport["total"] {
  return shown(buckets.reduce((total, [, totals]) => addTotals(total, totals), NO_TOTALS));
}

function shownBuckets(buckets: readonly [string, Totals][]): UsageReport["buckets"] {
  return buckets.map(([key, totals]) => ({ key, ...shown(totals) }));
}

function shown(totals: Totals): UsageReport["total"] {
  return {
    inputTokens: totals.inputTokens,
    cachedInputTokens: totals.cachedInputTokens,
    outputTokens: totals.outputTokens,
    llmCalls: totals.llmCalls,
    costUsd: totals.costNanos === undefined ? null : totals.costNanos / NANOS_PER_USD,
  };
}
