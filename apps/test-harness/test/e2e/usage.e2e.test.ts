/**
 * Usage, cost and budgets of the real server over HTTP (docs/http-api.md), on both stores: the session view's usage,
 * `GET /v1/usage` by day, model and session, prices from the config, and a principal's daily token budget;
 * then one budget across two instances on one Postgres.
 */
import type { UsageReport } from "@aptix/contracts";
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkAndResetHarness,
  databaseFor,
  E2E_CATALOG,
  E2E_STORES,
  expectContinuation,
  expectFailure,
  expectFinal,
  expectOk,
  startTestService,
  TEST_MODEL,
  type TestDatabase,
  type TestService,
  type TestStoreKind,
  toolContinuation,
  uniqueId,
  userTurn,
  writeCatalog,
} from "../../src/e2e/index.js";

/** A second context, on a model neither the config nor the built-in table prices. */
const UNPRICED = { context: "unpriced", model: "gpt-e2e-unpriced" };
/** The config's price of the test model, USD per million tokens. */
const PRICE = { inputPerMTok: 2, cachedInputPerMTok: 0.5, outputPerMTok: 8 };
/** Bob's budget: input and output tokens a UTC day. */
const BOB_TOKENS_DAILY = 300;

const usage = (input: number, output: number, cached = 0) => ({
  usage: { input_tokens: input, output_tokens: output, input_tokens_details: { cached_tokens: cached } },
});

const catalog = () =>
  writeCatalog({
    ...E2E_CATALOG,
    conversationContexts: [
      ...E2E_CATALOG.conversationContexts,
      { ...E2E_CATALOG.conversationContexts[0], id: UNPRICED.context, model: UNPRICED.model },
    ],
    prices: { [TEST_MODEL]: PRICE },
    budgets: { bob: { tokensDaily: BOB_TOKENS_DAILY } },
  });

const FIELDS = ["inputTokens", "cachedInputTokens", "outputTokens", "llmCalls"] as const;

describe.each(E2E_STORES)("%s store", (store: TestStoreKind) => {
  let harness: ScriptedOpenAI;
  let service: TestService;

  beforeAll(async () => {
    harness = await startScriptedOpenAI();
    service = await startTestService({ store, harness, env: { APTIX_CONFIG: await catalog() } });
  });

  afterAll(async () => {
    await service?.close();
    await harness?.close();
  });

  it("shows a session's usage as its turns' summed, and the caller's usage by day, model and session adding up to the total", async () => {
    const first = uniqueId("usage-a");
    const second = uniqueId("usage-b");
    harness.script(
      step.text("One.", usage(1_000, 100, 600)),
      step.functionCalls(
        [{ name: "read_file", callId: "call_1", arguments: { path: "a.ts" } }],
        usage(1_200, 40),
      ),
      step.text("Read it.", usage(1_300, 60, 1_000)),
      step.text("Unpriced.", usage(500, 50)),
      step.text("Bob's.", usage(7, 3)),
    );
    expectFinal(await service.post(userTurn(first, "t1", "One.")));
    const asking = expectContinuation(await service.post(userTurn(first, "t2", "Read a.ts.")));
    expectFinal(
      await service.post(
        toolContinuation(first, "t2", [
          { toolCallId: asking.toolCalls[0]?.toolCallId ?? "", resultJson: "{}" },
        ]),
      ),
    );
    expectFinal(
      await service.post(userTurn(second, "t1", "Unpriced.", { conversationContextId: UNPRICED.context })),
    );
    expectFinal(await service.post(userTurn(uniqueId("usage-bob"), "t1", "Bob's."), "bob"));
    checkAndResetHarness(harness);

    const view = expectOk(await service.session(first));
    for (const field of FIELDS) {
      expect(view.usage[field], field).toBe(
        view.turns.reduce((sum, turn) => sum + (turn.usage[field] ?? 0), 0),
      );
    }
    expect(view.usage).toEqual({
      inputTokens: 3_500,
      cachedInputTokens: 1_600,
      outputTokens: 200,
      reasoningTokens: 0,
      llmCalls: 3,
      // 1,900 uncached input at $2, 1,600 cached at $0.50, 200 output at $8, a million tokens.
      costUsd: expect.closeTo((1_900 * 2 + 1_600 * 0.5 + 200 * 8) / 1e6, 12),
    });
    expect(expectOk(await service.session(second)).usage.costUsd).toBeNull();

    // Sessions of other tests of this file are alice's too: this test's are picked out by session.
    const bySession = expectOk(await service.get<UsageReport>("/v1/usage?groupBy=session"));
    const mine = bySession.buckets.filter((bucket) => bucket.key === first || bucket.key === second);
    expect(mine.map((bucket) => [bucket.key, bucket.llmCalls])).toEqual([
      [first, 3],
      [second, 1],
    ]);
    expect(bySession.buckets.some((bucket) => bucket.key.startsWith("usage-bob"))).toBe(false);
    for (const groupBy of ["day", "model", "session"]) {
      const report = expectOk(await service.get<UsageReport>(`/v1/usage?groupBy=${groupBy}`));
      for (const field of FIELDS) {
        expect(
          report.buckets.reduce((sum, bucket) => sum + bucket[field], 0),
          `${groupBy} ${field}`,
        ).toBe(report.total[field]);
      }
      // The unpriced model's call is among them: no total cost is made up.
      expect(report.total.costUsd).toBeNull();
    }
    const byModel = expectOk(await service.get<UsageReport>("/v1/usage?groupBy=model"));
    expect(byModel.buckets.find((bucket) => bucket.key === UNPRICED.model)?.costUsd).toBeNull();
    expect(byModel.buckets.find((bucket) => bucket.key === TEST_MODEL)?.costUsd).toEqual(expect.any(Number));
    // Bob sees his own call only.
    const bobs = expectOk(await service.get<UsageReport>("/v1/usage", "bob"));
    expect(bobs.total).toMatchObject({ inputTokens: 7, outputTokens: 3, llmCalls: 1 });
  });

  it("refuses a bad from, to or groupBy with 400 naming the field", async () => {
    for (const [query, field] of [
      ["from=2026-02-30&to=2026-03-01", "from"],
      ["from=2026-03-01&to=soon", "to"],
      ["from=2026-03-02&to=2026-03-01", "to"],
      ["from=2025-01-01&to=2026-03-01", "to"],
      ["groupBy=hour", "groupBy"],
    ]) {
      const error = expectFailure(await service.get(`/v1/usage?${query}`), 400, "VALIDATION_FAILED");
      const fields = (error.details?.fields ?? []) as Array<{ path: string }>;
      expect(
        fields.map((f) => f.path),
        query,
      ).toEqual([field]);
    }
  });

  it("admits bob's turns until his daily tokens are passed, then refuses new ones 429 storing nothing, and ends an admitted turn at its tool results", async () => {
    const sessionId = uniqueId("budget");
    harness.script(
      step.text("One.", usage(200, 50)),
      step.functionCalls(
        [{ name: "read_file", callId: "call_b", arguments: { path: "b.ts" } }],
        usage(200, 50),
      ),
    );
    expectFinal(await service.post(userTurn(sessionId, "t1", "One."), "bob"));
    // 250 of 300 spent: admitted, and it asks for a client tool.
    const asking = expectContinuation(await service.post(userTurn(sessionId, "t2", "Read b.ts."), "bob"));
    const refused = await service.post(userTurn(sessionId, "t3", "Three."), "bob");
    const error = expectFailure(refused, 429, "BUDGET_EXCEEDED");
    const tomorrow = new Date();
    tomorrow.setUTCHours(24, 0, 0, 0);
    expect(error.details).toMatchObject({
      budget: "tokensDaily",
      used: 500 + 7 + 3,
      limit: BOB_TOKENS_DAILY,
      resetsAt: tomorrow.toISOString(),
    });
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    // Nothing stored: no third turn, no new session.
    const fresh = uniqueId("budget-new");
    expectFailure(await service.post(userTurn(fresh, "t1", "New."), "bob"), 429, "BUDGET_EXCEEDED");
    expectFailure(await service.session(fresh, "bob"), 404, "SESSION_NOT_FOUND");
    expect(expectOk(await service.session(sessionId, "bob")).turns.map((turn) => turn.turnId)).toEqual([
      "t1",
      "t2",
    ]);
    // The admitted turn is not stranded: its tool results are let in, and it ends before its next call.
    const continued = await service.post(
      toolContinuation(sessionId, "t2", [
        { toolCallId: asking.toolCalls[0]?.toolCallId ?? "", resultJson: "{}" },
      ]),
      "bob",
    );
    expect(expectFailure(continued, 429, "BUDGET_EXCEEDED").details).toMatchObject({ turnId: "t2" });
    const turns = expectOk(await service.session(sessionId, "bob")).turns;
    expect(turns.map((turn) => [turn.turnId, turn.status])).toEqual([
      ["t1", "completed"],
      ["t2", "failed"],
    ]);
    // Alice has no budget.
    harness.script(step.text("Alice's.", usage(10, 10)));
    expectFinal(await service.post(userTurn(uniqueId("budget-alice"), "t1", "Hi.")));
    checkAndResetHarness(harness);
  });
});

describe("APTIX_BUDGET_TOKENS_DAILY across two server instances on one Postgres", () => {
  let harness: ScriptedOpenAI;
  let database: TestDatabase;
  let first: TestService;
  let second: TestService;

  beforeAll(async () => {
    harness = await startScriptedOpenAI();
    database = await databaseFor("postgres");
    const env = { APTIX_BUDGET_TOKENS_DAILY: "100" };
    first = await startTestService({ store: "postgres", harness, database, env });
    second = await startTestService({ store: "postgres", harness, database, env });
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await database?.dispose();
    await harness?.close();
  });

  it("is one budget: what one instance's turns spent, the other refuses past", async () => {
    harness.script(step.text("On the first.", usage(60, 20)), step.text("On the second.", usage(30, 10)));
    expectFinal(await first.post(userTurn(uniqueId("shared-a"), "t1", "One.")));
    // 80 of 100 spent on the first instance: the second admits one more turn, and then neither admits another.
    expectFinal(await second.post(userTurn(uniqueId("shared-b"), "t1", "Two.")));
    for (const instance of [first, second]) {
      const error = expectFailure(
        await instance.post(userTurn(uniqueId("shared-c"), "t1", "Three.")),
        429,
        "BUDGET_EXCEEDED",
      );
      expect(error.details).toMatchObject({ budget: "tokensDaily", used: 120, limit: 100 });
    }
    checkAndResetHarness(harness);
  });
});
