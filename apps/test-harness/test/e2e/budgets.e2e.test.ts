/**
 * Budgets wherever spend happens, over HTTP on both stores: past a budget a turn sent again still gets its
 * stored answer, a running turn ends before its next round keeping its text, and a compaction asked for is
 * refused with no provider call; a compaction with nothing new calls nothing, and summary calls count toward
 * APTIX_MAX_LLM_CALLS.
 */
import type { SessionCompacted } from "@aptix/contracts";
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CREATE_FILE_CATALOG,
  checkAndResetHarness,
  E2E_STORES,
  expectFailure,
  expectFinal,
  expectOk,
  startTestService,
  type TestService,
  type TestStoreKind,
  uniqueId,
  userTurn,
  writeCatalog,
} from "../../src/e2e/index.js";

/** Bob's budget: input and output tokens a UTC day. Alice has none. */
const BOB_TOKENS_DAILY = 100;
/** The LLM calls one request may make, summarising calls included. */
const MAX_LLM_CALLS = 2;

const usage = (input: number, output: number) => ({
  usage: { input_tokens: input, output_tokens: output, input_tokens_details: { cached_tokens: 0 } },
});

describe.each(E2E_STORES)("%s store", (store: TestStoreKind) => {
  let harness: ScriptedOpenAI;
  let service: TestService;
  const compact = (sessionId: string, as: "alice" | "bob" = "alice") =>
    service.send<SessionCompacted>("POST", `/v1/sessions/${sessionId}/compact`, undefined, as);

  beforeAll(async () => {
    harness = await startScriptedOpenAI();
    const config = await writeCatalog({
      ...CREATE_FILE_CATALOG,
      budgets: { bob: { tokensDaily: BOB_TOKENS_DAILY } },
    });
    service = await startTestService({
      store,
      harness,
      env: { APTIX_CONFIG: config, APTIX_MAX_LLM_CALLS: String(MAX_LLM_CALLS) },
    });
  });

  afterAll(async () => {
    await service?.close();
    await harness?.close();
  });

  it("past bob's budget: a running turn ends before its next round with its text, a replay gets its stored answer, a compaction and a new turn are refused with no call", async () => {
    const sessionId = uniqueId("budget");
    harness.script(
      step.text("One.", usage(40, 10)),
      step.functionCalls(
        [
          {
            name: "create_file",
            callId: "call_notes",
            arguments: {
              name: "notes.md",
              mimeType: "text/markdown",
              content: "# Notes",
              encoding: null,
              description: null,
            },
          },
        ],
        { text: "Writing the notes.", ...usage(30, 30) },
      ),
    );
    expect(expectFinal(await service.post(userTurn(sessionId, "t1", "One."), "bob")).primaryOutputText).toBe(
      "One.",
    );
    // Admitted at 50 of 100; its first round spends 60 more, so it ends before its second, its text kept.
    const stopped = expectFailure(
      await service.post(userTurn(sessionId, "t2", "Write notes."), "bob"),
      429,
      "BUDGET_EXCEEDED",
    );
    expect(stopped.details).toMatchObject({
      budget: "tokensDaily",
      used: 110,
      limit: BOB_TOKENS_DAILY,
      turnId: "t2",
      partialText: "Writing the notes.",
    });
    expect(harness.responseRequests()).toHaveLength(2);
    const view = expectOk(await service.session(sessionId, "bob"));
    expect(view.turns.map((turn) => [turn.turnId, turn.status, turn.error?.code ?? null])).toEqual([
      ["t1", "completed", null],
      ["t2", "failed", "BUDGET_EXCEEDED"],
    ]);
    // The turn's text so far stays with it.
    expect(view.turns[1]?.error?.details).toMatchObject({ partialText: "Writing the notes." });
    const trace = expectOk(await service.trace(sessionId, "t2", "bob"));
    expect(trace.toolExecutions.map((execution) => execution.name)).toEqual(["create_file"]);

    // The answered turn sent again: its stored answer, whatever the budget.
    const replayed = await service.post(userTurn(sessionId, "t1", "One."), "bob");
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(expectFinal(replayed).primaryOutputText).toBe("One.");

    // A compaction past the budget: refused, no summary asked for.
    const refused = expectFailure(await compact(sessionId, "bob"), 429, "BUDGET_EXCEEDED");
    expect(refused.details).toMatchObject({ budget: "tokensDaily", limit: BOB_TOKENS_DAILY });
    expect(Number((await compact(sessionId, "bob")).headers.get("retry-after"))).toBeGreaterThan(0);
    expectFailure(await service.post(userTurn(sessionId, "t3", "Three."), "bob"), 429, "BUDGET_EXCEEDED");
    expect(harness.responseRequests()).toHaveLength(2);
    checkAndResetHarness(harness);
  });

  it("answers a compaction with nothing new compacted: false with no call, and stops summary calls at APTIX_MAX_LLM_CALLS", async () => {
    const sessionId = uniqueId("compact");
    harness.script(step.text("One.", usage(40, 10)), step.text("The user said one.", usage(60, 10)));
    expectFinal(await service.post(userTurn(sessionId, "t1", "One.")));
    expect(expectOk(await compact(sessionId))).toMatchObject({ compacted: true });
    expect(harness.responseRequests()).toHaveLength(2);
    // Nothing since that compaction: nothing to summarise, and no call.
    expect(expectOk(await compact(sessionId))).toEqual({ compacted: false });
    expect(harness.responseRequests()).toHaveLength(2);
    checkAndResetHarness(harness);

    // The summary's call refused as too long, again and again: retried only while the request has calls left.
    const overflow = step.error(400, {
      type: "invalid_request_error",
      code: "context_length_exceeded",
      message: "Your input exceeds the context window of this model.",
    });
    harness.script(step.text("Two.", usage(40, 10)), overflow, overflow, overflow);
    expectFinal(await service.post(userTurn(sessionId, "t2", "Two.")));
    expectFailure(await compact(sessionId), 502, "PROVIDER_ERROR");
    expect(harness.responseRequests()).toHaveLength(1 + MAX_LLM_CALLS);
    expect(harness.pendingSteps()).toBe(3 - MAX_LLM_CALLS);
    harness.script();
    checkAndResetHarness(harness);
  });
});
