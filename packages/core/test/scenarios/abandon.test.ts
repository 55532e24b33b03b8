import { describe, expect, it } from "vitest";
import type { TranscriptItem } from "../../src/index.js";
import { createTestAgent, errorsOf, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

const user = (instruction: string): TranscriptItem => ({
  type: "user_message",
  content: [{ type: "text", text: `[MODE: general]\n\n[INSTRUCTION]\n${instruction}` }],
});
const readFile = (callId: string) => ({
  toolCalls: [{ name: "read_file", arguments: { path: "a.ts" }, callId }],
});

describe("a new user turn abandoning a turn that awaits client tools", () => {
  it("marks the turn abandoned and continues from the response before the unanswered call, re-sending that call's input", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Hello." },
      readFile("c1"),
      { text: "Moved on." },
      { text: "Still fine." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Read a.ts" }));

    const next = responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Never mind" }));
    expect(next).toMatchObject({ kind: "final", primaryOutputText: "Moved on." });
    const resumed = agent.provider.requests[2];
    expect(resumed?.continuation).toEqual({ type: "previous_response", responseId: "resp_1" });
    expect(resumed?.input).toEqual([user("Read a.ts"), user("Never mind")]);

    const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(session.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
      ["t1", "completed"],
      ["t2", "abandoned"],
      ["t3", "completed"],
    ]);
    const late = await agent.execute({
      sessionId: "s",
      turnId: "t2",
      toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: "1" }],
    });
    expect(errorsOf(late)[0]).toEqual({
      code: "TURN_NOT_AWAITING_TOOLS",
      message: 'Turn "t2" is abandoned, not awaiting client tools.',
      details: { turnId: "t2", status: "abandoned" },
    });

    // The session then goes on from the abandoning turn's response.
    responseOf(await agent.execute({ sessionId: "s", turnId: "t4", instruction: "Next" }));
    expect(agent.provider.requests[3]?.continuation).toEqual({
      type: "previous_response",
      responseId: "resp_3",
    });
    expect(agent.provider.requests[3]?.input).toEqual([user("Next")]);
  });

  it("rolls back to the server tool round before the unanswered call when the pause came later in the turn", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Hello." },
      { toolCalls: [{ name: "lookup", arguments: { query: "x" }, callId: "s1" }] },
      readFile("c1"),
      { text: "Moved on." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Look and read" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Forget it" }));
    const resumed = agent.provider.requests[3];
    expect(resumed?.continuation).toEqual({ type: "previous_response", responseId: "resp_2" });
    expect(resumed?.input).toEqual([
      { type: "function_call_output", callId: "s1", output: '{"found":"answer to x"}', isError: false },
      user("Forget it"),
    ]);
  });

  it("re-sends the system prompt when the abandoned call was the session's first", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(readFile("c1"), { text: "Fine." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read a.ts" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Skip it" }));
    expect(agent.provider.requests[1]?.continuation).toEqual({ type: "none" });
    expect(agent.provider.requests[1]?.input).toEqual([
      { type: "system_message", text: "You are Aptix.\n\nHelp with anything." },
      user("Read a.ts"),
      user("Skip it"),
    ]);
  });

  it("never replays the unanswered function call to a stateless provider", async () => {
    const agent = await createTestAgent();
    agent.stateless.enqueue({ text: "Hello." }, readFile("c1"), { text: "Moved on." }, { text: "Later." });
    const start = { conversationContextId: "stateless" };
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi", ...start }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Read a.ts" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Never mind" }));
    expect(agent.provider.requests).toEqual([]);

    const system: TranscriptItem = {
      type: "system_message",
      text: "You are Aptix (replayed).\n\nHelp with anything.",
    };
    const turn1: TranscriptItem[] = [system, user("Hi"), { type: "assistant_message", text: "Hello." }];
    const [, paused, resumed] = agent.stateless.requests;
    expect(paused?.continuation).toEqual({ type: "replay", items: turn1 });
    expect(resumed?.continuation).toEqual({ type: "replay", items: turn1 });
    expect(resumed?.input).toEqual([user("Read a.ts"), user("Never mind")]);
    const replayed = resumed?.continuation.type === "replay" ? resumed.continuation.items : [];
    expect(replayed.some((item) => item.type === "function_call")).toBe(false);

    // The transcript the next turn replays holds the abandoning turn, not the abandoned call.
    responseOf(await agent.execute({ sessionId: "s", turnId: "t4", instruction: "Next" }));
    expect(agent.stateless.requests[3]?.continuation).toEqual({
      type: "replay",
      items: [
        ...turn1,
        user("Read a.ts"),
        user("Never mind"),
        { type: "assistant_message", text: "Moved on." },
      ],
    });
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns.map((turn) => turn.status)).toEqual(
      ["completed", "abandoned", "completed", "completed"],
    );
  });

  it("replays a stateless session's tool calls before their outputs, and drops a failed turn from later replays", async () => {
    const agent = await createTestAgent();
    agent.stateless.enqueue(
      readFile("c1"),
      { text: "Read." },
      {
        toolCalls: [
          { name: "read_file", arguments: { path: "x" }, callId: "c2" },
          { name: "read_file", arguments: { path: "y" }, callId: "c3" },
        ],
      },
      { text: "After the failure." },
    );
    const start = { conversationContextId: "stateless" };
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read a.ts", ...start }));
    responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: '"A"' }],
      }),
    );
    const system: TranscriptItem = {
      type: "system_message",
      text: "You are Aptix (replayed).\n\nHelp with anything.",
    };
    const call1: TranscriptItem = {
      type: "function_call",
      callId: "c1",
      name: "read_file",
      argumentsJson: '{"path":"a.ts"}',
    };
    const output1: TranscriptItem = {
      type: "function_call_output",
      callId: "c1",
      output: '"A"',
      isError: false,
    };
    expect(agent.stateless.requests[1]?.continuation).toEqual({
      type: "replay",
      items: [system, user("Read a.ts"), call1],
    });
    expect(agent.stateless.requests[1]?.input).toEqual([output1]);

    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Read x and y" }));
    const mismatch = await agent.execute({
      sessionId: "s",
      turnId: "t2",
      toolResults: [{ toolCallId: "c3", executionMs: 1, resultJson: "1" }],
    });
    expect(errorsOf(mismatch)[0].code).toBe("TOOL_RESULTS_MISMATCH");

    responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Go on" }));
    expect(agent.stateless.requests[3]?.continuation).toEqual({
      type: "replay",
      items: [system, user("Read a.ts"), call1, output1, { type: "assistant_message", text: "Read." }],
    });
    expect(agent.stateless.requests[3]?.input).toEqual([user("Go on")]);
  });
});
