import { fail } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { inMemorySessionStores } from "../../src/in-memory/in-memory-session-stores.js";
import { CONTINUATION_LOST, type TurnObserver } from "../../src/index.js";
import type { ObservedRound } from "../../src/ports/turn-observer.js";
import { createTestAgent, errorsOf, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

const lookup = (query: string) => ({ toolCalls: [{ name: "lookup", arguments: { query } }] });

describe("failed turns", () => {
  it("stops a reasoner loop at maxLlmCallsPerRequest and continues the next turn from before the failed one", async () => {
    const agent = await createTestAgent({ maxLlmCallsPerRequest: 3 });
    agent.provider.enqueue({ text: "Hello." }, lookup("1"), lookup("2"), lookup("3"), { text: "Recovered." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));

    const looping = await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Loop forever" });
    expect(looping).toEqual({
      successful: false,
      errors: [
        {
          code: "ITERATION_LIMIT_EXCEEDED",
          message:
            "The request made 3 LLM calls (summaries included) without a final answer or a client tool call.",
          details: { maxLlmCalls: 3 },
        },
      ],
      warnings: [],
    });
    expect(agent.provider.requests).toHaveLength(4);
    const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(session.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
      ["t1", "completed"],
      ["t2", "failed"],
    ]);
    // The failed turn keeps what it spent.
    expect(session.turns[1]?.usage).toEqual({
      inputTokens: 30,
      outputTokens: 15,
      totalTokens: 45,
      llmCalls: 3,
    });

    // The loop stopped at the limit: the script's text answer is still there for the next turn.
    expect(agent.provider.remainingSteps).toBe(1);

    const next = responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Answer now" }));
    expect(next).toMatchObject({ kind: "final", primaryOutputText: "Recovered." });
    expect(agent.provider.requests[4]?.continuation).toEqual({
      type: "previous_response",
      responseId: "resp_1",
    });
    expect(agent.provider.requests[4]?.input).toEqual([
      {
        type: "user_message",
        content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nAnswer now" }],
      },
    ]);
  });

  it("fails the turn with TOOL_FAILED when an executor throws, and the session goes on", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Hello." },
      { toolCalls: [{ name: "lookup", arguments: { query: "x", explode: true }, callId: "s1" }] },
      { text: "Back." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    const failed = await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Look it up" });
    expect(failed).toEqual({
      successful: false,
      errors: [
        {
          code: "TOOL_FAILED",
          message: "Server tool lookup failed: lookup backend is down",
          details: { tool: "lookup", toolCallId: "s1" },
        },
      ],
      warnings: [],
    });
    const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(session.turns[1]).toMatchObject({
      turnId: "t2",
      status: "failed",
      error: { code: "TOOL_FAILED" },
    });

    const next = responseOf(
      await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Anything else?" }),
    );
    expect(next).toMatchObject({ kind: "final", primaryOutputText: "Back." });
    expect(agent.provider.requests[2]?.continuation).toEqual({
      type: "previous_response",
      responseId: "resp_1",
    });
    expect(agent.provider.requests[2]?.input).toHaveLength(1);
  });

  it("returns a provider failure as it is, fails the turn, and starts the session afresh on the next turn", async () => {
    const agent = await createTestAgent();
    const outage = fail("PROVIDER_ERROR", "The provider answered 500.", { status: 500, requestId: "req_1" });
    agent.provider.enqueue({ failure: outage }, { text: "Hello now." });
    const failed = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" });
    expect(failed).toEqual(outage);
    const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(session.turns).toMatchObject([{ turnId: "t1", status: "failed", error: outage.errors[0] }]);

    const next = responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Hi again" }));
    expect(next).toMatchObject({ kind: "final", primaryOutputText: "Hello now.", usage: { llmCalls: 1 } });
    // The provider saw nothing of the failed turn: the session's first successful call carries the system prompt.
    expect(agent.provider.requests[1]?.continuation).toEqual({ type: "none" });
    expect(agent.provider.requests[1]?.input).toEqual([
      { type: "system_message", text: "You are Aptix.\n\nHelp with anything." },
      {
        type: "user_message",
        content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nHi again" }],
      },
    ]);
  });

  it("fails the turn when the provider answers tool calls with duplicate ids", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({
      toolCalls: [
        { name: "read_file", arguments: { path: "a" }, callId: "dup" },
        { name: "read_file", arguments: { path: "b" }, callId: "dup" },
      ],
    });
    const failed = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read" });
    expect(errorsOf(failed)).toEqual([
      {
        code: "PROVIDER_ERROR",
        message: "The scripted response has tool calls without unique ids.",
        details: { provider: "scripted" },
      },
    ]);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns[0]?.status).toBe("failed");
  });

  it("recovers a lost continuation by replaying the transcript", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Hello." }, { text: "Replayed fine." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    agent.provider.forget("resp_1");

    const second = responseOf(
      await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Still there?" }),
    );
    expect(second).toMatchObject({
      kind: "final",
      primaryOutputText: "Replayed fine.",
      usage: { llmCalls: 1 },
    });
    const [, lost, replayed] = agent.provider.requests;
    const userMessage = {
      type: "user_message",
      content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nStill there?" }],
    };
    expect(lost?.continuation).toEqual({ type: "previous_response", responseId: "resp_1" });
    expect(replayed?.continuation).toEqual({
      type: "replay",
      items: [
        { type: "system_message", text: "You are Aptix.\n\nHelp with anything." },
        { type: "user_message", content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nHi" }] },
        { type: "assistant_message", text: "Hello." },
      ],
    });
    expect(replayed?.input).toEqual([userMessage]);

    // The trace keeps both calls: the lost one with its error, the replay as an item count.
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t2"));
    expect(
      trace.llmCalls.map((call) => [
        call.index,
        call.request?.continuation,
        call.error?.details?.reason ?? null,
      ]),
    ).toEqual([
      [0, { type: "previous_response", responseId: "resp_1" }, CONTINUATION_LOST],
      [1, { type: "replay", itemCount: 3 }, null],
    ]);

    // After the replay the session continues from the new response again.
    agent.provider.enqueue({ text: "Third." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "And now?" }));
    expect(agent.provider.requests[3]?.continuation).toEqual({
      type: "previous_response",
      responseId: "resp_2",
    });
  });

  it("recovers a continuation lost during a tool continuation round by replaying the calls before their outputs", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "read_file", arguments: { path: "a.ts" }, callId: "c1" }] },
      { text: "Read it." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read a.ts" }));
    agent.provider.forget("resp_1");
    const final = responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: '"A"' }],
      }),
    );
    expect(final).toMatchObject({ kind: "final", primaryOutputText: "Read it.", usage: { llmCalls: 2 } });
    const replayed = agent.provider.requests[2];
    expect(replayed?.continuation).toEqual({
      type: "replay",
      items: [
        { type: "system_message", text: "You are Aptix.\n\nHelp with anything." },
        {
          type: "user_message",
          content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nRead a.ts" }],
        },
        { type: "function_call", callId: "c1", name: "read_file", argumentsJson: '{"path":"a.ts"}' },
      ],
    });
    expect(replayed?.input).toEqual([
      { type: "function_call_output", callId: "c1", output: '"A"', isError: false },
    ]);
  });

  it("fails the turn, not the session, when something throws inside the round", async () => {
    const brokenTool = {
      definition: { name: "lookup", description: "Breaks.", parameters: { type: "object" } },
      parseArguments(): never {
        throw new Error("parser bug");
      },
      async execute() {
        return { result: null };
      },
    };
    const faults: unknown[] = [];
    const agent = await createTestAgent({ serverTools: [brokenTool], observer: faultsInto(faults) });
    agent.provider.enqueue(lookup("x"), { text: "Fine again." });

    const broken = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Look it up" });
    // What was thrown is the operator's (the observer's `fault`), not the answer's nor the stored turn's.
    expect(errorsOf(broken)).toEqual([
      {
        code: "INTERNAL",
        message: "The turn failed unexpectedly; the request id identifies it in the service's logs.",
      },
    ]);
    const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(session.turns.map((turn) => turn.status)).toEqual(["failed"]);
    expect(JSON.stringify(session)).not.toContain("parser bug");
    expect(faults).toEqual([
      [expect.objectContaining({ sessionId: "s", turnId: "t1" }), new Error("parser bug")],
    ]);

    const next = responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Again" }));
    expect(next).toMatchObject({ kind: "final", primaryOutputText: "Fine again." });
    // The failed turn left nothing behind: the next call starts the session afresh.
    expect(agent.provider.requests[1]?.continuation).toEqual({ type: "none" });
  });

  it("gives the lease back when the store refuses a round's settlement and its failure, so the next turn runs at once", async () => {
    // A driver's error quotes the statement and its parameters (here, what the boot prompt would be).
    const refusal = new Error('Failed query: update "turns" set ... params: BOOT-PROMPT-SECRET');
    let refusals = 2;
    const store = inMemorySessionStores();
    const write = store.turns.write.bind(store.turns);
    store.turns.write = async (turnWrite) => {
      if (turnWrite.guard === "lease" && turnWrite.releaseLease && refusals > 0) {
        refusals -= 1;
        throw refusal;
      }
      return write(turnWrite);
    };
    const faults: unknown[] = [];
    const agent = await createTestAgent({ store, observer: faultsInto(faults) });
    agent.provider.enqueue({ text: "Refused." }, { text: "Next." });

    const refused = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" });
    expect(errorsOf(refused)).toEqual([
      {
        code: "INTERNAL",
        message: "The turn failed unexpectedly; the request id identifies it in the service's logs.",
      },
    ]);
    expect(JSON.stringify(refused)).not.toContain("SECRET");
    expect(faults.map((fault) => (fault as unknown[])[1])).toEqual([refusal, refusal]);

    // Not SESSION_BUSY until the lease lapses: the next turn takes the session over, ending t1.
    const next = responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Again" }));
    expect(next).toMatchObject({ kind: "final", primaryOutputText: "Next." });
    const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(session.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
      ["t1", "failed"],
      ["t2", "completed"],
    ]);
    expect(JSON.stringify(session)).not.toContain("SECRET");
  });
});

/** An observer that watches nothing but the faults, each as `[round, error]` in `faults`. */
function faultsInto(faults: unknown[]): TurnObserver {
  return {
    round: (_round, run) => run(),
    llmCall: (_call, run) => run(),
    toolRun: (_tool, run) => run(),
    retrieval: (_query, run) => run(),
    compaction: (_compaction, run) => run(),
    fault: (round: ObservedRound, error) => faults.push([round, error]),
  };
}
