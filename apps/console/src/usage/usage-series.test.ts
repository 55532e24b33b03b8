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
  it("stacks each day's tokens by model over every day of the range, unused days at 0", () => {
    const series = usageSeries(
      [
        row("2026-12-02", "gpt-5", 100, 20),
        row("2026-11-30", "gpt-5", 10, 5),
        row("2026-12-02", "claude-sonnet-4-5", 7, 3),
      ],
      { from: "2026-11-29", to: "2026-12-02" },
    );
    expect(series).toEqual({
      days: ["2026-11-29", "2026-11-30", "2026-12-01", "2026-12-02"],
      series: [
        { model: "claude-sonnet-4-5", tokens: [0, 0, 0, 10] },
        { model: "gpt-5", tokens: [0, 15, 0, 120] },
      ],
    });
  });

  it("has the range's days and no series without rows", () => {
    expect(usageSeries([], { from: "2026-12-01", to: "2026-12-01" })).toEqual({
      days: ["2026-12-01"],
      series: [],
    });
  });
});
