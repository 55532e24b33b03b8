import type { SessionUsage, UsageQuery, UsageReport } from "@aptix/contracts";
import type { SessionStore, UsageGrouping, UsageSum } from "../ports/session-store.js";
import type { SessionKey } from "../records/session-record.js";
import type { PriceList } from "./price-list.js";
import { utcMonthOf } from "./utc-periods.js";

const DAY_MS = 86_400_000;
const NANOS_PER_USD = 1_000_000_000;
/** A session's whole life: from before its first call until long after its last (a year every store can write). */
const ALL_TIME = { from: new Date(0), to: new Date("9999-12-31T00:00:00.000Z") };

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

/** The usage views (DESIGN §17): a session's usage, a principal's report by group, and what a budget counts. */
export class UsageReports {
  constructor(
    private readonly store: Pick<SessionStore, "sumUsage">,
    private readonly prices: PriceList,
  ) {}

  /** The range a query names (its dates, both included), or the UTC month of `now`. */
  static rangeOf(query: Pick<UsageQuery, "from" | "to">, now: Date): TimeRange {
    if (query.from !== undefined && query.to !== undefined) {
      return { from: new Date(query.from), to: new Date(Date.parse(query.to) + DAY_MS) };
    }
    return utcMonthOf(now);
  }

  async report(principal: string, range: TimeRange, groupBy: UsageGrouping): Promise<UsageReport> {
    const sums = await this.store.sumUsage({ principal, ...range, groupBy });
    const buckets = new Map<string, Totals>();
    for (const sum of sums) buckets.set(sum.key, this.#add(buckets.get(sum.key) ?? NO_TOTALS, sum));
    const total = [...buckets.values()].reduce(addTotals, NO_TOTALS);
    return {
      buckets: [...buckets]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, totals]) => ({ key, ...shown(totals) })),
      total: shown(total),
    };
  }

  /** Every LLM call of the session's turns, compaction summaries included. */
  async sessionUsage(key: SessionKey): Promise<SessionUsage> {
    const sums = await this.store.sumUsage({ ...key, ...ALL_TIME, groupBy: "model" });
    const totals = sums.reduce((total, sum) => this.#add(total, sum), NO_TOTALS);
    return { ...shown(totals), reasoningTokens: totals.reasoningTokens };
  }

  async spent(principal: string, range: TimeRange): Promise<Spent> {
    const sums = await this.store.sumUsage({ principal, ...range, groupBy: "model" });
    const totals = sums.reduce((total, sum) => this.#add(total, sum), NO_TOTALS);
    return { tokens: totals.inputTokens + totals.outputTokens, usd: totals.pricedNanos / NANOS_PER_USD };
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

function shown(totals: Totals): UsageReport["total"] {
  return {
    inputTokens: totals.inputTokens,
    cachedInputTokens: totals.cachedInputTokens,
    outputTokens: totals.outputTokens,
    llmCalls: totals.llmCalls,
    costUsd: totals.costNanos === undefined ? null : totals.costNanos / NANOS_PER_USD,
  };
}
