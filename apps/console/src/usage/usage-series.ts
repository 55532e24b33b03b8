import type { UsageRow } from "./usage-rows.js";

/** The usage chart's data: one stack per day, one series per model, each value a day's tokens of that model. */
export interface UsageSeries {
  days: string[];
  series: { model: string; tokens: number[] }[];
}

const DAY_MS = 86_400_000;

/**
 * The chart's series from the table's rows, so the two show the same figures: every day of the range (UTC dates,
 * both included) in order, models in order of name, and a day a model was not used counts 0 tokens (input and
 * output together).
 */
export function usageSeries(rows: readonly UsageRow[], range: { from: string; to: string }): UsageSeries {
  const days: string[] = [];
  for (let time = Date.parse(range.from); time <= Date.parse(range.to); time += DAY_MS) {
    days.push(new Date(time).toISOString().slice(0, 10));
  }
  const models = [...new Set(rows.map((row) => row.model))].sort();
  const dayIndex = new Map(days.map((day, index) => [day, index]));
  const series = models.map((model) => ({ model, tokens: days.map(() => 0) }));
  const seriesOf = new Map(series.map((entry) => [entry.model, entry]));
  for (const row of rows) {
    const entry = seriesOf.get(row.model);
    const index = dayIndex.get(row.day);
    if (entry && index !== undefined)
      entry.tokens[index] = (entry.tokens[index] ?? 0) + row.inputTokens + row.outputTokens;
  }
  return { days, series };
}
