import { describe, expect, it } from "vitest";
import { createTestAgent, responseOf } from "../support/test-agent.js";

describe("a conversation through execute", () => {
  it("sends the system prompt on the first call only and continues from the previous response id", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Hello." }, { text: "Again." });

    const first = responseOf(await agent.execute({ sessionId: "s1", turnId: "t1", instruction: "Hi" }));
    const second = responseOf(await agent.execute({ sessionId: "s1", turnId: "t2", instruction: "More" }));

    expect(first).toEqual({
      kind: "final",
      sessionId: "s1",
      turnId: "t1",
      modeDisplayName: "General",
      primaryOutputText: "Hello.",
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, llmCalls: 1 },
    });
    expect(second.kind).toBe("final");
    const [call1, call2] = agent.provider.requests;
    expect(call1?.continuation).toEqual({ type: "none" });
    expect(call1?.input).toEqual([
      { type: "system_message", text: "You are Aptix.\n\nHelp with anything." },
      { type: "user_message", content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nHi" }] },
    ]);
    expect(call2?.continuation).toEqual({ type: "previous_response", responseId: "resp_1" });
    expect(call2?.input).toEqual([
      { type: "user_message", content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nMore" }] },
    ]);
    expect(call2?.tools.map((tool) => tool.name)).toEqual(["read_file", "lookup", "agent_change_mode"]);
  });

  it("hands client tool calls to the client and continues with their results over two rounds", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Let me look.", toolCalls: [{ name: "read_file", arguments: { path: "a.ts" }, callId: "c1" }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "b.ts" }, callId: "c2" }] },
      { text: "Both files are fine." },
    );
    const paused = responseOf(
      await agent.execute({ sessionId: "s1", turnId: "t1", instruction: "Check a and b" }),
    );
    expect(paused).toEqual({
      kind: "client_tool_continuation",
      sessionId: "s1",
      turnId: "t1",
      modeDisplayName: "General",
      toolCalls: [{ toolCallId: "c1", name: "read_file", argumentsJson: '{"path":"a.ts"}' }],
      toolContinuationMessage: "Let me look.",
    });
    const again = responseOf(
      await agent.execute({
        sessionId: "s1",
        turnId: "t1",
        toolResults: [{ toolCallId: "c1", executionMs: 3, resultJson: '"A"' }],
      }),
    );
    expect(
      again.kind === "client_tool_continuation" && again.toolCalls.map((call) => call.toolCallId),
    ).toEqual(["c2"]);
    const final = responseOf(
      await agent.execute({
        sessionId: "s1",
        turnId: "t1",
        toolResults: [{ toolCallId: "c2", executionMs: 4, errorMessage: "no such file" }],
      }),
    );
    expect(final).toMatchObject({
      kind: "final",
      primaryOutputText: "Both files are fine.",
      usage: { llmCalls: 3 },
    });
    expect(agent.provider.requests[1]?.input).toEqual([
      { type: "function_call_output", callId: "c1", output: '"A"', isError: false },
    ]);
    expect(agent.provider.requests[2]?.input).toEqual([
      { type: "function_call_output", callId: "c2", output: "no such file", isError: true },
    ]);
  });

  it("runs server calls first and sends every output back in call order once the client answers", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      {
        toolCalls: [
          { name: "lookup", arguments: { query: "x" }, callId: "s1" },
          { name: "read_file", arguments: { path: "a.ts" }, callId: "c1" },
          { name: "lookup", arguments: { query: "y" }, callId: "s2" },
        ],
      },
      { text: "Done." },
    );
    const paused = responseOf(await agent.execute({ sessionId: "s", turnId: "t", instruction: "Go" }));
    expect(
      paused.kind === "client_tool_continuation" && paused.toolCalls.map((call) => call.toolCallId),
    ).toEqual(["c1"]);
    const final = responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t",
        toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: "{}" }],
      }),
    );
    expect(
      agent.provider.requests[1]?.input.map((item) => item.type === "function_call_output" && item.callId),
    ).toEqual(["s1", "c1", "s2"]);
    expect(final.kind === "final" && final.toolResults?.map((result) => result.toolCallId)).toEqual([
      "s1",
      "s2",
    ]);
    expect(final.kind === "final" && final.files?.map((file) => file.name)).toEqual([
      "answer.txt",
      "answer.txt",
    ]);
  });
});
