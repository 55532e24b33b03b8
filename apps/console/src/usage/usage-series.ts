import type { UsageRow } from "./usage-rows.js";

/** The usage chart's data: one stack per day, one series per model, each value a day's tokens of that model. */
export interface UsageSeries {
  days: string[];
  series: { model: string; tokens: number[] }[];
}

/**
 * The chart's series from the table's rows, so the two show the same figures: days in order, models in order of
 * name, and a day a model was not used counts 0 tokens (input and output together).
 */
export function usageSeries(rows: readonly UsageRow[]): UsageSeries {
  const days = [...new Set(rows.map((row) => row.day))].sort();
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
