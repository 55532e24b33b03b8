import { fail, type InvokeFailure } from "@aptix/contracts";
import type { AgentService, Clock } from "@aptix/core";

/** A principal's budgets (DESIGN §17): USD a UTC month, tokens (input and output) a UTC day. */
interface BudgetLimits {
  usdMonthly?: number;
  tokensDaily?: number;
}

export interface BudgetsOptions {
  /** Every principal's (`APTIX_BUDGET_USD_MONTHLY`, `APTIX_BUDGET_TOKENS_DAILY`). */
  defaults: BudgetLimits;
  /** By principal, each limit it gives replacing the default one (`APTIX_CONFIG` `budgets`). */
  principals: Readonly<Record<string, BudgetLimits>>;
}

/**
 * The budgets new user turns are admitted under. What a principal spent is read from the store each time, so
 * every instance sharing it judges one budget; a turn admitted while under budget runs its rounds to the end.
 */
export class Budgets {
  constructor(
    private readonly options: BudgetsOptions,
    private readonly service: Pick<AgentService, "spent">,
    private readonly clock: Clock,
  ) {}

  /** Whether any principal has a budget: without one, no read is made. */
  get any(): boolean {
    const limited = (limits: BudgetLimits) =>
      limits.usdMonthly !== undefined || limits.tokensDaily !== undefined;
    return limited(this.options.defaults) || Object.values(this.options.principals).some(limited);
  }

  /** 429 BUDGET_EXCEEDED when a budget of `principal` is spent (`used` at or past `limit`); else undefined. */
  async refusal(principal: string): Promise<InvokeFailure | undefined> {
    const limits = { ...this.options.defaults, ...this.options.principals[principal] };
    const now = this.clock.now();
    const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const nextDay = new Date(day.getTime() + 86_400_000);
    if (limits.tokensDaily !== undefined) {
      const { tokens } = await this.service.spent(principal, { from: day, to: nextDay });
      if (tokens >= limits.tokensDaily) {
        return exceeded("tokensDaily", tokens, limits.tokensDaily, nextDay, now);
      }
    }
    if (limits.usdMonthly !== undefined) {
      const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
      const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
      const { usd } = await this.service.spent(principal, { from: month, to: nextMonth });
      if (usd >= limits.usdMonthly) return exceeded("usdMonthly", usd, limits.usdMonthly, nextMonth, now);
    }
    return undefined;
  }
}

function exceeded(
  budget: keyof BudgetLimits,
  used: number,
  limit: number,
  resetsAt: Date,
  now: Date,
): InvokeFailure {
  const retryAfterSeconds = Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));
  const what = budget === "tokensDaily" ? `${limit} tokens a day` : `${limit} USD a month`;
  return fail(
    "BUDGET_EXCEEDED",
    `The ${budget} budget (${what}) is spent; new turns are accepted again from ${resetsAt.toISOString()}.`,
    { budget, used, limit, resetsAt: resetsAt.toISOString(), retryAfterSeconds },
  );
}
