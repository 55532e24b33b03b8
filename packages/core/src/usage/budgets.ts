import { fail, type InvokeFailure } from "@aptix/contracts";
import type { Clock } from "../ports/clock.js";
import type { TimeRange, UsageReports } from "./usage-reports.js";
import { utcDayOf, utcMonthOf } from "./utc-periods.js";

/** A principal's budgets: USD of priced calls a UTC month, tokens (input and output) a UTC day. */
interface BudgetLimits {
  usdMonthly?: number;
  tokensDaily?: number;
}

export interface BudgetsOptions {
  /** Every principal's. */
  defaults: BudgetLimits;
  /** By principal, each limit it gives replacing the default one. */
  principals: Readonly<Record<string, BudgetLimits>>;
}

/**
 * The budgets spend is judged against: before a new user turn is admitted, before each further round of a
 * running turn, and before a compaction asked for. What a principal spent is read from the store each time, so
 * every instance sharing it judges one budget.
 */
export class Budgets {
  constructor(
    private readonly options: BudgetsOptions,
    private readonly usage: Pick<UsageReports, "spent">,
    private readonly clock: Clock,
  ) {}

  /**
   * BUDGET_EXCEEDED when a budget of `principal` is spent (`used` at or past `limit`), its message ending with
   * `refused` (what the refusal means for the request) and its details with `details`; else undefined. Without
   * a budget for the principal nothing is read.
   */
  async refusal(
    principal: string,
    refused: string,
    details: Record<string, unknown> = {},
  ): Promise<InvokeFailure | undefined> {
    const limits = { ...this.options.defaults, ...this.options.principals[principal] };
    const now = this.clock.now();
    const judged: Array<[keyof BudgetLimits, number | undefined, TimeRange, "tokens" | "usd"]> = [
      ["tokensDaily", limits.tokensDaily, utcDayOf(now), "tokens"],
      ["usdMonthly", limits.usdMonthly, utcMonthOf(now), "usd"],
    ];
    // The periods' reads go at once: a new turn of a principal with both budgets waits for one round trip.
    const spent = await Promise.all(
      judged.map(([, limit, period]) =>
        limit === undefined ? undefined : this.usage.spent(principal, period),
      ),
    );
    for (const [index, [budget, limit, period, measure]] of judged.entries()) {
      const sums = spent[index];
      if (limit === undefined || sums === undefined) continue;
      const used = sums[measure];
      if (used < limit) continue;
      const resetsAt = period.to;
      const retryAfterSeconds = Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));
      const what = budget === "tokensDaily" ? `${limit} tokens a day` : `${limit} USD a month`;
      return fail(
        "BUDGET_EXCEEDED",
        `The ${budget} budget (${what}) is spent until ${resetsAt.toISOString()}: ${refused}`,
        { budget, used, limit, resetsAt: resetsAt.toISOString(), retryAfterSeconds, ...details },
      );
    }
    return undefined;
  }
}
