import type { SumSessionUsageInput, SumUsageInput, UsageStore, UsageSum } from "../ports/usage-store.js";
import type { UsageEntry } from "../records/usage-entry.js";
import { copy, type InMemorySessions } from "./in-memory-sessions.js";

/** A `UsageStore` in process memory (see `inMemorySessionStores`). */
export class InMemoryUsageStore implements UsageStore {
  readonly #shared: InMemorySessions;

  constructor(shared: InMemorySessions) {
    this.#shared = shared;
  }

  async recordUsage(entries: readonly UsageEntry[]): Promise<void> {
    for (const entry of entries) this.#shared.keepUsage(copy(entry));
  }

  /** Sums the calls of whole UTC days, as the drizzle store's daily roll-ups do, a page of sessions at a time. */
  async sumUsage({ principal, from, to, groupBy, page }: SumUsageInput): Promise<UsageSum[]> {
    const [first, last] = [dayOf(from), dayOf(to)];
    const inRange = [...this.#shared.usage.values()].filter((entry) => {
      const day = dayOf(entry.startedAt);
      return entry.principal === principal && day >= first && day < last;
    });
    const keyOf = (entry: UsageEntry) =>
      groupBy === "day"
        ? dayOf(entry.startedAt)
        : groupBy === "model"
          ? entry.model
          : (entry.sessionId ?? "");
    let entries = inRange;
    if (page !== undefined) {
      const after = page.after;
      const sessions = [...new Set(inRange.map(keyOf))]
        .filter((key) => after === undefined || key > after)
        .sort()
        .slice(0, page.limit);
      entries = inRange.filter((entry) => sessions.includes(keyOf(entry)));
    }
    return sumsByKey(entries, keyOf);
  }

  async sumSessionUsage({ principal, sessionId, since }: SumSessionUsageInput): Promise<UsageSum[]> {
    const entries = [...this.#shared.usage.values()].filter(
      (entry) =>
        entry.principal === principal &&
        entry.sessionId === sessionId &&
        entry.startedAt.getTime() >= since.getTime(),
    );
    return sumsByKey(entries, (entry) => entry.model);
  }
}

/** The UTC date of `time`, `YYYY-MM-DD`. */
function dayOf(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/** `entries` summed by `keyOf` and by provider and model. */
function sumsByKey(entries: readonly UsageEntry[], keyOf: (entry: UsageEntry) => string): UsageSum[] {
  const sums = new Map<string, UsageSum>();
  for (const entry of entries) {
    const key = keyOf(entry);
    const name = JSON.stringify([key, entry.provider, entry.model]);
    const sum = sums.get(name) ?? {
      key,
      provider: entry.provider,
      model: entry.model,
      inputTokens: 0,
      cachedInputTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
      llmCalls: 0,
    };
    sum.inputTokens += entry.inputTokens;
    sum.cachedInputTokens += entry.cachedInputTokens;
    sum.outputTokens += entry.outputTokens;
    sum.reasoningTokens += entry.reasoningTokens;
    sum.llmCalls += 1;
    sums.set(name, sum);
  }
  return [...sums.values()];
}
