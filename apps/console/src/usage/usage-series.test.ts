import { describe, expect, it } from "vitest";
import { usageSeries } from "./usage-series.js";

const row = (day: string, model: string, inputTokens: number, outputTokens: number) => ({
  day,
  model,
  inputTokens,
  outputTokens,
  costUsd: null,
});

describe("usageSeries", () => {
  it("stacks each day's tokens by model, days in order and a model's unused days at 0", () => {
    const series = usageSeries([
      row("2026-12-02", "gpt-5", 100, 20),
      row("2026-12-01", "gpt-5", 10, 5),
      row("2026-12-02", "claude-sonnet-4-5", 7, 3),
    ]);
    expect(series).toEqual({
      days: ["2026-12-01", "2026-12-02"],
      series: [
        { model: "claude-sonnet-4-5", tokens: [0, 10] },
        { model: "gpt-5", tokens: [15, 120] },
      ],
    });
  });

  it("has no day and no series without rows", () => {
    expect(usageSeries([])).toEqual({ days: [], series: [] });
  });
});
