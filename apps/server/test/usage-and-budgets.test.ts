import type { AgentExecuteResponse, InvokeError, SessionSummary, UsageReport } from "@aptix/contracts";
import { inMemorySessionStores, ManualClock } from "@aptix/core/testing";
import { describe, expect, it, vi } from "vitest";
import { setup } from "./http-app-setup.js";

const BOB = "bob-key-0123456789ab";
/** 10 input and 5 output tokens a call (the scripted provider's default): 15 tokens a one-call turn. */
const TOKENS_PER_TURN = 15;

/** The `result` of a successful answer. */
async function resultOf<T>(response: Response): Promise<T> {
  const body = (await response.json()) as { result: T };
  return body.result;
}

const reportOf = (response: Response) => resultOf<UsageReport>(response);
const viewOf = (response: Response) => resultOf<SessionSummary>(response);
const answerOf = (response: Response) => resultOf<AgentExecuteResponse>(response);

/** The first error of a refused answer. */
async function errorOf(response: Response): Promise<InvokeError> {
  const body = (await response.json()) as { errors: InvokeError[] };
  return body.errors[0] as InvokeError;
}

describe("GET /v1/usage", () => {
  it("sums the caller's own usage by day, model and session, the buckets adding up to the total", async () => {
    const clock = new ManualClock(new Date("2026-03-10T12:00:00.000Z"));
    const { post, get, provider } = setup({ clock });
    provider.enqueue({ text: "one" }, { text: "two", usage: { inputTokens: 100, cachedInputTokens: 60 } });
    provider.enqueue({ text: "bob's", usage: { inputTokens: 1_000, outputTokens: 1_000 } });
    expect((await post({ sessionId: "s1", turnId: "t1", instruction: "one" })).status).toBe(200);
    clock.advance(86_400_000);
    expect((await post({ sessionId: "s2", turnId: "t1", instruction: "two" })).status).toBe(200);
    expect((await post({ sessionId: "s1", turnId: "t1", instruction: "bob" }, BOB)).status).toBe(200);

    const total = { inputTokens: 110, cachedInputTokens: 60, outputTokens: 10, llmCalls: 2 };
    for (const groupBy of ["day", "model", "session"]) {
      const report = await reportOf(await get(`/v1/usage?groupBy=${groupBy}`));
      expect(report.total).toMatchObject(total);
      for (const field of ["inputTokens", "cachedInputTokens", "outputTokens", "llmCalls"] as const) {
        expect(report.buckets.reduce((sum, bucket) => sum + bucket[field], 0)).toBe(total[field]);
      }
      const cost = report.buckets.reduce((sum, bucket) => sum + (bucket.costUsd ?? 0), 0);
      expect(cost).toBeCloseTo(report.total.costUsd ?? Number.NaN, 12);
    }
    const byDay = await reportOf(await get("/v1/usage"));
    expect(byDay.buckets.map((bucket) => bucket.key)).toEqual(["2026-03-10", "2026-03-11"]);
    const bySession = await reportOf(await get("/v1/usage?groupBy=session"));
    expect(bySession.buckets.map((bucket) => bucket.key)).toEqual(["s1", "s2"]);
    // gpt-5.1 by the built-in table: 50 uncached at $1.25, 60 cached at $0.125, 10 out at $10 a million.
    expect(bySession.total.costUsd ?? Number.NaN).toBeCloseTo((50 * 1.25 + 60 * 0.125 + 10 * 10) / 1e6, 12);
    // Outside the range: nothing.
    const march1 = await reportOf(await get("/v1/usage?from=2026-03-01&to=2026-03-09"));
    expect(march1).toEqual({
      buckets: [],
      total: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, llmCalls: 0, costUsd: 0 },
    });
    // The session view's usage is its turns' usage summed.
    const view = await viewOf(await get("/v1/sessions/s2"));
    expect(view.usage).toMatchObject({
      inputTokens: 100,
      cachedInputTokens: 60,
      outputTokens: 5,
      llmCalls: 1,
    });
    expect(view.usage.inputTokens).toBe(view.turns[0]?.usage.inputTokens);
  });

  it("refuses a bad from, to or groupBy with 400 naming the field", async () => {
    const { get } = setup();
    for (const [query, field] of [
      ["from=2026-13-01&to=2026-12-31", "from"],
      ["from=2026-01-01&to=tomorrow", "to"],
      ["from=2026-01-01&to=2027-01-02", "to"],
      ["from=2026-01-01", "to"],
      ["groupBy=week", "groupBy"],
      ["groupBy=session&limit=501", "limit"],
      ["groupBy=session&cursor=not%20a%20cursor", "cursor"],
      ["groupBy=model&cursor=after:s1", "cursor"],
    ]) {
      const response = await get(`/v1/usage?${query}`);
      expect(response.status).toBe(400);
      const error = await errorOf(response);
      expect(error.code).toBe("VALIDATION_FAILED");
      const fields = (error.details?.fields ?? []) as Array<{ path: string }>;
      expect(fields.map((f) => f.path)).toEqual([field]);
    }
  });

  it("runs at most two of a principal's usage reads at once: a third is 429 RATE_LIMITED with Retry-After", async () => {
    // A store whose usage sums wait until the test lets them go: reads that stay running.
    const held: Array<() => void> = [];
    const store = inMemorySessionStores();
    const sumUsage = store.usage.sumUsage.bind(store.usage);
    store.usage.sumUsage = async (input) => {
      await new Promise<void>((resolve) => held.push(resolve));
      return sumUsage(input);
    };
    const { get } = setup({ store });
    const running = [get("/v1/usage?groupBy=model"), get("/v1/usage?groupBy=day")];
    await vi.waitFor(() => expect(held).toHaveLength(2));
    const refused = await get("/v1/usage");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect((await errorOf(refused)).code).toBe("RATE_LIMITED");
    // Another principal's reads are not held back by alice's.
    const bobs = get("/v1/usage", BOB);
    await vi.waitFor(() => expect(held).toHaveLength(3));
    for (const release of held.splice(0)) release();
    expect((await Promise.all([...running, bobs])).map((response) => response.status)).toEqual([
      200, 200, 200,
    ]);
    // Slots given back: alice reads again.
    const again = get("/v1/usage");
    await vi.waitFor(() => expect(held).toHaveLength(1));
    for (const release of held.splice(0)) release();
    expect((await again).status).toBe(200);
  });

  it("prices a model by the config over the built-in table, and an unpriced model as null", async () => {
    const priced = setup({
      service: {
        prices: { "gpt-5.1": { inputPerMTok: 1_000, cachedInputPerMTok: 0, outputPerMTok: 2_000 } },
      },
    });
    priced.provider.enqueue({ text: "ok" });
    await priced.post({ sessionId: "s", turnId: "t", instruction: "hi" });
    const report = await reportOf(await priced.get("/v1/usage?groupBy=model"));
    // 10 in at $1,000 and 5 out at $2,000 a million.
    expect(report.buckets).toEqual([expect.objectContaining({ key: "gpt-5.1", costUsd: 0.02 })]);
    const unpriced = setup({ model: "in-house-model" });
    unpriced.provider.enqueue({ text: "ok" });
    await unpriced.post({ sessionId: "s", turnId: "t", instruction: "hi" });
    const unpricedReport = await reportOf(await unpriced.get("/v1/usage?groupBy=model"));
    expect(unpricedReport.buckets).toEqual([
      expect.objectContaining({ key: "in-house-model", costUsd: null }),
    ]);
    expect(unpricedReport.total.costUsd).toBeNull();
    expect((await viewOf(await unpriced.get("/v1/sessions/s"))).usage.costUsd).toBeNull();
  });
});

describe("budgets", () => {
  it("admits turns until the daily tokens are passed, then refuses new ones 429 storing nothing, until the UTC day ends", async () => {
    const clock = new ManualClock(new Date("2026-03-10T23:00:00.000Z"));
    const { post, get, provider } = setup({
      clock,
      budgets: {
        defaults: { tokensDaily: 2 * TOKENS_PER_TURN },
        principals: { bob: { tokensDaily: 1_000 } },
      },
    });
    provider.enqueue({ text: "one" }, { toolCalls: [{ name: "read_file", arguments: { path: "a.ts" } }] });
    expect((await post({ sessionId: "s", turnId: "t1", instruction: "one" })).status).toBe(200);
    // Admitted under budget, this turn asks for a client tool.
    const asking = await answerOf(await post({ sessionId: "s", turnId: "t2", instruction: "read a.ts" }));
    if (asking.kind !== "client_tool_continuation") throw new Error("expected client tool calls");
    const refused = await post({ sessionId: "s", turnId: "t3", instruction: "three" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("3600");
    expect(await errorOf(refused)).toMatchObject({
      code: "BUDGET_EXCEEDED",
      details: {
        budget: "tokensDaily",
        used: 2 * TOKENS_PER_TURN,
        limit: 2 * TOKENS_PER_TURN,
        resetsAt: "2026-03-11T00:00:00.000Z",
      },
    });
    // Nothing stored: not even a new session.
    expect((await post({ sessionId: "other", turnId: "t1", instruction: "x" })).status).toBe(429);
    expect((await get("/v1/sessions/other")).status).toBe(404);
    expect((await viewOf(await get("/v1/sessions/s"))).turns).toHaveLength(2);
    // Sent again, an answered turn gets its stored answer whatever the budget: it spends nothing.
    const replayed = await post({ sessionId: "s", turnId: "t1", instruction: "one" });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(await answerOf(replayed)).toMatchObject({ kind: "final", primaryOutputText: "one" });
    // The admitted turn's continuation is let in, so the turn is not stranded: it ends before its next call.
    const toolCallId = asking.toolCalls[0]?.toolCallId;
    const continued = await post({
      sessionId: "s",
      turnId: "t2",
      toolResults: [{ toolCallId, executionMs: 1, resultJson: '{"contents":"x"}' }],
    });
    expect(continued.status).toBe(429);
    expect(await errorOf(continued)).toMatchObject({ code: "BUDGET_EXCEEDED", details: { turnId: "t2" } });
    expect(provider.requests).toHaveLength(2);
    expect((await viewOf(await get("/v1/sessions/s"))).turns[1]).toMatchObject({ status: "failed" });
    // Another principal's budget is its own.
    provider.enqueue({ text: "bob's" });
    expect((await post({ sessionId: "s", turnId: "t1", instruction: "hi" }, BOB)).status).toBe(200);
    // A new UTC day: a new budget.
    clock.advance(3_600_000);
    provider.enqueue({ text: "next day" });
    expect((await post({ sessionId: "s", turnId: "t3", instruction: "three" })).status).toBe(200);
  });

  it("refuses past the monthly USD budget until the first of the next UTC month", async () => {
    const clock = new ManualClock(new Date("2026-02-27T00:00:00.000Z"));
    const { post, provider } = setup({
      clock,
      service: { prices: { "gpt-5.1": { inputPerMTok: 100_000, cachedInputPerMTok: 0, outputPerMTok: 0 } } },
      budgets: { defaults: { usdMonthly: 1 }, principals: {} },
    });
    provider.enqueue({ text: "one" });
    expect((await post({ sessionId: "s", turnId: "t1", instruction: "one" })).status).toBe(200);
    const refused = await post({ sessionId: "s", turnId: "t2", instruction: "two" });
    expect(refused.status).toBe(429);
    expect((await errorOf(refused)).details).toEqual({
      budget: "usdMonthly",
      used: 1,
      limit: 1,
      resetsAt: "2026-03-01T00:00:00.000Z",
      retryAfterSeconds: 2 * 86_400,
    });
    expect(refused.headers.get("retry-after")).toBe(String(2 * 86_400));
  });
});
