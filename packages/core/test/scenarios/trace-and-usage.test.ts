import { fail } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { createTestAgent, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

describe("the turn trace and usage", () => {
  it("sums usage over every call of every round of the turn", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      {
        toolCalls: [{ name: "lookup", arguments: { query: "x" }, callId: "s1" }],
        usage: { inputTokens: 100, outputTokens: 20, cachedInputTokens: 50 },
      },
      {
        toolCalls: [{ name: "read_file", arguments: { path: "a.ts" }, callId: "c1" }],
        usage: { inputTokens: 200, outputTokens: 30, reasoningTokens: 7 },
      },
      { text: "All done.", usage: { inputTokens: 300, outputTokens: 40 } },
    );
    const paused = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Work" }));
    expect(paused).not.toHaveProperty("usage");
    const final = responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        toolResults: [{ toolCallId: "c1", executionMs: 5, resultJson: '"A"' }],
      }),
    );
    const usage = {
      inputTokens: 600,
      outputTokens: 90,
      totalTokens: 690,
      cachedInputTokens: 50,
      reasoningTokens: 7,
      llmCalls: 3,
    };
    expect(final.kind === "final" && final.usage).toEqual(usage);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns[0]?.usage).toEqual(usage);
  });

  it("counts a fork's copied turns once: their calls stay in the source's traces and usage", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "One." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    resultOf(await agent.service.forkSession(PRINCIPAL, "s", { newSessionId: "f" }));
    expect(resultOf(await agent.service.getTurnTrace(PRINCIPAL, "f", "t1")).llmCalls).toEqual([]);
    expect(resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1")).llmCalls).toHaveLength(1);
    // Reports count whole UTC days: up to tomorrow's start.
    const today = { from: new Date(0), to: new Date(agent.clock.now().getTime() + 86_400_000) };
    const bySession = await agent.service.usage(PRINCIPAL, today, { groupBy: "session" });
    expect(bySession.buckets.map(({ key, llmCalls }) => [key, llmCalls])).toEqual([["s", 1]]);
  });

  it("lists every LLM call with its composed request and normalized response", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Hello." },
      { text: "Checking.", toolCalls: [{ name: "lookup", arguments: { query: "x" }, callId: "s1" }] },
      {
        toolCalls: [{ name: "read_file", arguments: { path: "a.ts" }, callId: "c1" }],
        reasoning: { id: "rs_1" },
      },
      { text: "Done.", usage: { inputTokens: 7, outputTokens: 3 } },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    const startedAt = agent.clock.now();
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Work" }));
    responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t2",
        toolResults: [{ toolCallId: "c1", executionMs: 5, resultJson: '"A"' }],
      }),
    );

    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t2"));
    expect(trace).toMatchObject({
      turnId: "t2",
      sequence: 2,
      status: "completed",
      mode: "general",
      error: null,
    });
    // The turn keeps each request it answered, with the answer.
    expect(trace.rounds.map((round) => round.request)).toEqual([
      { sessionId: "s", turnId: "t2", instruction: "Work" },
      {
        sessionId: "s",
        turnId: "t2",
        toolResults: [{ toolCallId: "c1", executionMs: 5, resultJson: '"A"' }],
      },
    ]);
    expect(trace.rounds.map((round) => round.result?.successful)).toEqual([true, true]);
    expect(trace.llmCalls.map((call) => call.index)).toEqual([0, 1, 2]);
    // Each composed request is exactly what the provider received.
    expect(trace.llmCalls.map((call) => call.request)).toEqual(agent.provider.requests.slice(1));
    expect(trace.llmCalls[0]).toEqual({
      index: 0,
      request: {
        model: "gpt-test",
        continuation: { type: "previous_response", responseId: "resp_1" },
        input: [
          {
            type: "user_message",
            content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nWork" }],
          },
        ],
        tools: agent.provider.requests[1]?.tools,
        toolChoice: { type: "auto" },
        cacheKey: agent.provider.requests[0]?.cacheKey,
      },
      response: {
        responseId: "resp_2",
        output: [
          { type: "assistant_message", text: "Checking." },
          { type: "function_call", callId: "s1", name: "lookup", argumentsJson: '{"query":"x"}' },
        ],
        text: "Checking.",
        toolCalls: [{ callId: "s1", name: "lookup", argumentsJson: '{"query":"x"}' }],
        usage: { inputTokens: 10, outputTokens: 5 },
        finishReason: "tool_calls",
      },
      providerRequest: { scripted: true, inputItems: 1 },
      providerResponse: { responseId: "resp_2", text: "Checking." },
      error: null,
      startedAt,
      durationMs: 0,
    });
    expect(trace.llmCalls[1]?.response?.output[0]).toEqual({
      type: "reasoning",
      provider: "scripted",
      data: { id: "rs_1" },
    });
    expect(trace.llmCalls[2]?.request?.input).toEqual([
      { type: "function_call_output", callId: "c1", output: '"A"', isError: false },
    ]);
    expect(trace.llmCalls[2]?.response).toMatchObject({
      responseId: "resp_4",
      text: "Done.",
      finishReason: "stop",
    });
    expect(trace.toolExecutions).toEqual([
      {
        toolCallId: "s1",
        name: "lookup",
        argumentsJson: '{"query":"x"}',
        resultJson: '{"found":"answer to x"}',
        // The manual clock stands still: the run starts when the call that asked for it did.
        startedAt,
        executionMs: 0,
      },
    ]);
    expect(trace.usage).toEqual({ inputTokens: 27, outputTokens: 13, totalTokens: 40, llmCalls: 3 });
    // The trace is diagnostics only: the calls of other turns are not in it.
    expect(resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1")).llmCalls).toHaveLength(1);
  });

  it("keeps a replay continuation as its item count", async () => {
    const agent = await createTestAgent();
    agent.stateless.enqueue({ text: "One." }, { text: "Two." });
    responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        instruction: "Hi",
        conversationContextId: "stateless",
      }),
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Again" }));
    expect(agent.stateless.requests[1]?.continuation.type).toBe("replay");
    const [call] = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t2")).llmCalls;
    expect(call?.request?.continuation).toEqual({ type: "replay", itemCount: 3 });
    expect(call?.request?.model).toBe("claude-test");
    expect(call?.response?.responseId).toBeUndefined();
    expect(call?.response).not.toHaveProperty("trace");
  });

  it("keeps a failed call with its error and no response", async () => {
    const agent = await createTestAgent();
    const outage = fail("PROVIDER_ERROR", "Upstream timed out.", { status: 504 });
    agent.provider.enqueue({ failure: outage });
    await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" });
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1"));
    expect(trace.status).toBe("failed");
    expect(trace.error).toEqual(outage.errors[0]);
    expect(trace.llmCalls).toHaveLength(1);
    expect(trace.llmCalls[0]).toMatchObject({
      index: 0,
      response: null,
      providerRequest: null,
      providerResponse: null,
      error: outage.errors[0],
    });
    expect(trace.llmCalls[0]?.request?.continuation).toEqual({ type: "none" });
  });
});
