import { fail, type TurnEvent } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { CONTEXT_OVERFLOW } from "../../src/index.js";
import {
  catalogWithContextSettings,
  createTestAgent,
  errorsOf,
  PRINCIPAL,
  responseOf,
  resultOf,
} from "../support/test-agent.js";

/** Tokens (input and output) a principal may use a UTC day. */
const budgetOf = (tokensDaily: number) => ({ budgets: { defaults: { tokensDaily }, principals: {} } });
/** 10 input and 5 output tokens: the scripted provider's default usage of a call. */
const CALL_TOKENS = 15;

describe("budgets hold wherever spend happens", () => {
  it("answers a turn sent again with its stored answer past the budget, and refuses a new turn storing nothing", async () => {
    const agent = await createTestAgent(budgetOf(CALL_TOKENS));
    agent.provider.enqueue({ text: "One." });
    const request = { sessionId: "s", turnId: "t1", instruction: "One." };
    responseOf(await agent.execute(request));

    const replayed = await agent.service.handle(request, PRINCIPAL);
    expect(replayed).toMatchObject({ type: "answer", replayed: true });
    if (replayed.type !== "answer") throw new Error("expected an answer");
    expect(responseOf(replayed.result)).toMatchObject({ kind: "final", primaryOutputText: "One." });

    const [refused] = errorsOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Two." }));
    expect(refused).toMatchObject({
      code: "BUDGET_EXCEEDED",
      details: { budget: "tokensDaily", used: CALL_TOKENS, limit: CALL_TOKENS },
    });
    expect(agent.provider.requests).toHaveLength(1);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns).toHaveLength(1);
  });

  it("ends a running turn BUDGET_EXCEEDED before its next call, keeping its text so far and freeing the session", async () => {
    const agent = await createTestAgent(budgetOf(20));
    agent.provider.enqueue({
      text: "Looking it up.",
      toolCalls: [{ name: "lookup", arguments: { query: "cart" } }],
      usage: { inputTokens: 10, outputTokens: 15 },
    });
    const events: TurnEvent[] = [];
    const failed = await agent.service.execute(
      { sessionId: "s", turnId: "t1", instruction: "Look it up.", stream: true },
      PRINCIPAL,
      { onEvent: (event) => events.push(event) },
    );
    expect(errorsOf(failed)[0]).toMatchObject({
      code: "BUDGET_EXCEEDED",
      details: { budget: "tokensDaily", used: 25, limit: 20, turnId: "t1", partialText: "Looking it up." },
    });
    // One call, its server tool run; the text shown is not taken back before the result.
    expect(agent.provider.requests).toHaveLength(1);
    expect(events.some((event) => event.event === "output_text.reset")).toBe(false);
    const deltas = events.flatMap((event) => (event.event === "output_text.delta" ? [event.data.delta] : []));
    expect(deltas.join("")).toBe("Looking it up.");
    expect(events.at(-1)?.event).toBe("result");
    // The session is free (not SESSION_BUSY), and the failed turn left nothing new to compact.
    expect(resultOf(await agent.service.compactSession(PRINCIPAL, "s"))).toEqual({ compacted: false });
    const view = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(view.turns[0]).toMatchObject({
      status: "failed",
      error: { code: "BUDGET_EXCEEDED" },
      usage: { llmCalls: 1 },
    });
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1"));
    expect(trace.toolExecutions.map((execution) => execution.name)).toEqual(["lookup"]);
  });

  it("lets in a continuation of a turn admitted before the budget ran out, and ends that turn BUDGET_EXCEEDED with no call", async () => {
    const agent = await createTestAgent(budgetOf(CALL_TOKENS));
    agent.provider.enqueue({ toolCalls: [{ name: "read_file", arguments: { path: "a.ts" } }] });
    const asking = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read." }));
    if (asking.kind !== "client_tool_continuation") throw new Error("expected client tool calls");
    const continued = await agent.execute({
      sessionId: "s",
      turnId: "t1",
      toolResults: [{ toolCallId: asking.toolCalls[0]?.toolCallId ?? "", executionMs: 1, resultJson: "{}" }],
    });
    expect(errorsOf(continued)[0]).toMatchObject({ code: "BUDGET_EXCEEDED", details: { turnId: "t1" } });
    expect(agent.provider.requests).toHaveLength(1);
    const view = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(view.turns[0]).toMatchObject({ status: "failed", error: { code: "BUDGET_EXCEEDED" } });
  });

  it("lets turns admitted together pass the budget by one round each, no more", async () => {
    const agent = await createTestAgent(budgetOf(20));
    const lookup = {
      text: "Looking.",
      toolCalls: [{ name: "lookup", arguments: { query: "x" } }],
      usage: { inputTokens: 20, outputTokens: 5 },
    };
    agent.provider.enqueue(lookup, lookup);
    const [first, second] = [agent.provider.holdNextCall(), agent.provider.holdNextCall()];
    const turns = ["a", "b"].map((sessionId) =>
      agent.execute({ sessionId, turnId: "t1", instruction: "Look." }),
    );
    // Both admitted before either spent anything; each then stops after its one round.
    await Promise.all([first.entered, second.entered]);
    first.release();
    second.release();
    for (const turn of await Promise.all(turns)) {
      expect(errorsOf(turn)[0]?.code).toBe("BUDGET_EXCEEDED");
    }
    expect(agent.provider.requests).toHaveLength(2);
  });
});

/** The test catalog with a small window: 1,000 tokens, compacting past 800. */
const SMALL_WINDOW = catalogWithContextSettings({
  contextWindowTokens: 1_000,
  compactionModel: "summariser",
});

describe("compaction under budgets and the request's call limit", () => {
  it("refuses a compaction asked for past the budget, with no call", async () => {
    const agent = await createTestAgent(budgetOf(CALL_TOKENS));
    agent.provider.enqueue({ text: "One." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "One." }));
    const [refused] = errorsOf(await agent.service.compactSession(PRINCIPAL, "s"));
    expect(refused).toMatchObject({ code: "BUDGET_EXCEEDED", details: { budget: "tokensDaily" } });
    expect(agent.provider.requests).toHaveLength(1);
  });

  it("answers compacted: false with no call when nothing came since the latest compaction, even with input unsent", async () => {
    const agent = await createTestAgent();
    // A turn asks for a client tool; the next turn abandons it and fails: the session's cursor is back before
    // the abandoned call, its input unsent, and no turn of the conversation is new.
    agent.provider.enqueue(
      { toolCalls: [{ name: "read_file", arguments: { path: "a.ts" } }] },
      { failure: fail("PROVIDER_ERROR", "down") },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read." }));
    errorsOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Other." }));
    expect(resultOf(await agent.service.compactSession(PRINCIPAL, "s"))).toEqual({ compacted: false });
    expect(agent.provider.requests).toHaveLength(2);
    // Compacted once, a second ask has nothing new either.
    agent.provider.enqueue({ text: "Three." }, { text: "The summary." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Three." }));
    expect(resultOf(await agent.service.compactSession(PRINCIPAL, "s"))).toMatchObject({ compacted: true });
    expect(resultOf(await agent.service.compactSession(PRINCIPAL, "s"))).toEqual({ compacted: false });
    expect(agent.provider.requests).toHaveLength(4);
  });

  it("counts a turn's summarising call toward maxLlmCallsPerRequest", async () => {
    const agent = await createTestAgent({ config: SMALL_WINDOW, maxLlmCallsPerRequest: 1 });
    agent.provider.enqueue(
      { text: "Noted.", usage: { inputTokens: 700, outputTokens: 100 } },
      { text: "The summary." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Remember this." }));
    // Past the threshold: the summary's call is the request's one call, so the turn's own call is not made.
    const [limited] = errorsOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Go on." }));
    expect(limited).toMatchObject({ code: "ITERATION_LIMIT_EXCEEDED", details: { maxLlmCalls: 1 } });
    expect(agent.provider.requests.map((request) => request.model)).toEqual(["gpt-test", "summariser"]);
  });

  it("makes no more summarising attempts in a compaction asked for than maxLlmCallsPerRequest", async () => {
    const agent = await createTestAgent({ config: SMALL_WINDOW, maxLlmCallsPerRequest: 2 });
    const overflow = {
      failure: fail("PROVIDER_ERROR", "too long", { status: 400, reason: CONTEXT_OVERFLOW }),
    };
    agent.provider.enqueue({ text: "One." }, overflow, overflow, overflow);
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "One." }));
    expect(errorsOf(await agent.service.compactSession(PRINCIPAL, "s"))[0]?.code).toBe("PROVIDER_ERROR");
    expect(agent.provider.requests).toHaveLength(3);
  });
});
