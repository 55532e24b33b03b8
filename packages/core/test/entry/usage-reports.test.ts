import { describe, expect, it } from "vitest";
import { inMemorySessionStores } from "../../src/in-memory/in-memory-session-stores.js";
import { PriceList, type SessionStores, UsageReports } from "../../src/index.js";
import {
  FIXTURE_TIME,
  ManualClock,
  newCallRecord,
  newLease,
  newSessionKey,
  newTurnRecord,
  startTurnFor,
} from "../../src/testing/index.js";

const PRICED = { "gpt-test": { inputPerMTok: 2, cachedInputPerMTok: 0.5, outputPerMTok: 8 } };
const DAY = FIXTURE_TIME.toISOString().slice(0, 10);

/** A store holding one turn of `key` whose calls use `models`, each 120 tokens in (100 cached), 30 out. */
async function storeWith(models: string[]): Promise<SessionStores> {
  const store = inMemorySessionStores(new ManualClock());
  const key = newSessionKey("s-1", "principal-a");
  const lease = newLease("owner", 60_000);
  await startTurnFor(store, newTurnRecord(key, "t1"), lease);
  for (const [index, model] of models.entries()) {
    const call = newCallRecord(key, "t1", index);
    if (call.request) call.request.model = model;
    await store.turns.recordLlmCall({ call, lease });
  }
  return store;
}

describe("PriceList", () => {
  it("takes a configured price before the built-in one, and the longest prefix", () => {
    const prices = new PriceList(
      { "gpt-5.1": { inputPerMTok: 9, cachedInputPerMTok: 9, outputPerMTok: 9 } },
      {
        "gpt-5*": { inputPerMTok: 1, cachedInputPerMTok: 1, outputPerMTok: 1 },
        "gpt-5-mini*": { inputPerMTok: 2, cachedInputPerMTok: 2, outputPerMTok: 2 },
      },
    );
    expect(prices.priceOf("gpt-5.1")?.inputPerMTok).toBe(9);
    expect(prices.priceOf("gpt-5-2025")?.inputPerMTok).toBe(1);
    expect(prices.priceOf("gpt-5-mini-2025")?.inputPerMTok).toBe(2);
    expect(prices.priceOf("gpt-4")).toBeUndefined();
  });

  it("prices uncached input, cached input and output at their own prices, in whole nano-dollars", () => {
    const prices = new PriceList(PRICED, {});
    // 20 uncached × $2 + 100 cached × $0.5 + 30 out × $8, per million tokens.
    const sum = { model: "gpt-test", inputTokens: 120, cachedInputTokens: 100, outputTokens: 30 };
    expect(prices.costNanos(sum)).toBe((20 * 2 + 100 * 0.5 + 30 * 8) * 1_000);
    expect(prices.costNanos({ ...sum, model: "unpriced" })).toBeUndefined();
  });
});

describe("UsageReports", () => {
  it("costs a turn's calls, a failed call as nothing, and null once a model is unpriced or forgotten", () => {
    const reports = new UsageReports(
      inMemorySessionStores(new ManualClock()).usage,
      new PriceList(PRICED, {}),
    );
    const key = newSessionKey("s-1", "principal-a");
    const priced = newCallRecord(key, "t1", 0);
    const failed = { ...newCallRecord(key, "t1", 1), response: null };
    // 20 uncached × $2 + 100 cached × $0.5 + 30 out × $8, per million tokens.
    expect(reports.turnCostUsd([priced, failed])).toBe(0.00033);
    expect(reports.turnCostUsd([])).toBe(0);
    const unpriced = newCallRecord(key, "t1", 1);
    if (unpriced.request) unpriced.request.model = "mystery";
    expect(reports.turnCostUsd([priced, unpriced])).toBeNull();
    expect(reports.turnCostUsd([{ ...priced, request: null }])).toBeNull();
  });

  it("costs a priced model from the table and an unpriced one as null, its bucket and the total too", async () => {
    const reports = new UsageReports(
      (await storeWith(["gpt-test", "gpt-test", "mystery"])).usage,
      new PriceList(PRICED, {}),
    );
    const range = { from: new Date(0), to: new Date("2100-01-01") };
    const byModel = await reports.report("principal-a", range, { groupBy: "model" });
    expect(byModel.buckets).toEqual([
      {
        key: "gpt-test",
        inputTokens: 240,
        cachedInputTokens: 200,
        outputTokens: 60,
        llmCalls: 2,
        costUsd: 0.00066,
      },
      {
        key: "mystery",
        inputTokens: 120,
        cachedInputTokens: 100,
        outputTokens: 30,
        llmCalls: 1,
        costUsd: null,
      },
    ]);
    expect(byModel.total).toEqual({
      inputTokens: 360,
      cachedInputTokens: 300,
      outputTokens: 90,
      llmCalls: 3,
      costUsd: null,
    });
    const byDay = await reports.report("principal-a", range, { groupBy: "day" });
    expect(byDay.buckets.map((bucket) => [bucket.key, bucket.costUsd])).toEqual([[DAY, null]]);
    expect(await reports.spent("principal-a", range)).toEqual({ tokens: 450, usd: 0.00066 });
    expect(await reports.sessionUsage(newSessionKey("s-1", "principal-a"), new Date(0))).toEqual({
      inputTokens: 360,
      cachedInputTokens: 300,
      outputTokens: 90,
      reasoningTokens: 36,
      llmCalls: 3,
      costUsd: null,
    });
  });

  it("pages the session grouping in key order, calls outside a session first, each page with the whole total", async () => {
    const store = inMemorySessionStores(new ManualClock());
    for (const sessionId of ["s-3", "s-1", "s-2"]) {
      const key = newSessionKey(sessionId, "principal-a");
      const lease = newLease(`owner-${sessionId}`, 60_000);
      await startTurnFor(store, newTurnRecord(key, "t1"), lease);
      await store.turns.recordLlmCall({ call: newCallRecord(key, "t1", 0), lease });
    }
    await store.usage.recordUsage([
      {
        callId: "embedding-1",
        principal: "principal-a",
        sessionId: null,
        turnId: null,
        index: null,
        provider: "openai",
        model: "gpt-test",
        inputTokens: 50,
        cachedInputTokens: 0,
        outputTokens: 0,
        reasoningTokens: 0,
        startedAt: FIXTURE_TIME,
      },
    ]);
    const reports = new UsageReports(store.usage, new PriceList(PRICED));
    const range = { from: new Date(0), to: new Date("2100-01-01") };
    const first = await reports.report("principal-a", range, { groupBy: "session", limit: 2 });
    expect(first.buckets.map((bucket) => [bucket.key, bucket.inputTokens])).toEqual([
      ["", 50],
      ["s-1", 120],
    ]);
    expect(first.nextCursor).toBe("after:s-1");
    const second = await reports.report("principal-a", range, {
      groupBy: "session",
      limit: 2,
      cursor: first.nextCursor,
    });
    expect(second.buckets.map((bucket) => bucket.key)).toEqual(["s-2", "s-3"]);
    expect(second.nextCursor).toBeUndefined();
    expect(second.total).toEqual(first.total);
    expect(first.total).toMatchObject({ inputTokens: 410, llmCalls: 4 });
    const fromStart = await reports.report("principal-a", range, {
      groupBy: "session",
      limit: 1,
      cursor: "after:",
    });
    expect(fromStart.buckets.map((bucket) => bucket.key)).toEqual(["s-1"]);
  });

  it("reads a query's dates as whole UTC days, and no dates as the current UTC month", () => {
    expect(UsageReports.rangeOf({ from: "2026-03-01", to: "2026-03-02" }, FIXTURE_TIME)).toEqual({
      from: new Date("2026-03-01T00:00:00.000Z"),
      to: new Date("2026-03-03T00:00:00.000Z"),
    });
    expect(UsageReports.rangeOf({}, new Date("2026-12-31T23:59:59.999Z"))).toEqual({
      from: new Date("2026-12-01T00:00:00.000Z"),
      to: new Date("2027-01-01T00:00:00.000Z"),
    });
  });
});
