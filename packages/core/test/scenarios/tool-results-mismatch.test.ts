import type { ToolResult } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { createTestAgent, errorsOf, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

const answer = (toolCallId: string): ToolResult => ({ toolCallId, executionMs: 1, resultJson: '"ok"' });

const cases: Array<{ name: string; results: ToolResult[]; reason: string }> = [
  {
    name: "count",
    results: [answer("c1")],
    reason: "expected 2 tool result(s) for c1, c2, received 1",
  },
  {
    name: "id",
    results: [answer("c1"), answer("c9")],
    reason: 'toolResults[1] answers "c9", expected "c2"',
  },
  {
    name: "order",
    results: [answer("c2"), answer("c1")],
    reason: "tool results are out of order: expected c1, c2, received c2, c1",
  },
];

describe("tool results that do not match the turn's calls (AGN-033 §3.3)", () => {
  for (const { name, results, reason } of cases) {
    it(`fails the turn on a ${name} mismatch and lets the next user turn continue from before it`, async () => {
      const agent = await createTestAgent();
      agent.provider.enqueue(
        { text: "Hello." },
        {
          toolCalls: [
            { name: "read_file", arguments: { path: "a.ts" }, callId: "c1" },
            { name: "read_file", arguments: { path: "b.ts" }, callId: "c2" },
          ],
        },
        { text: "Fresh start." },
      );
      responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
      const paused = responseOf(
        await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Read a and b" }),
      );
      expect(
        paused.kind === "client_tool_continuation" && paused.toolCalls.map((call) => call.toolCallId),
      ).toEqual(["c1", "c2"]);

      const mismatched = await agent.execute({ sessionId: "s", turnId: "t2", toolResults: results });
      expect(mismatched).toEqual({
        successful: false,
        errors: [
          {
            code: "TOOL_RESULTS_MISMATCH",
            message: `Tool results do not match the turn's tool calls: ${reason}. The turn has failed; the session goes on with the next user turn.`,
            details: {
              expectedToolCallIds: ["c1", "c2"],
              receivedToolCallIds: results.map((result) => result.toolCallId),
            },
          },
        ],
        warnings: [],
      });
      expect(agent.provider.requests).toHaveLength(2);

      const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
      expect(session.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
        ["t1", "completed"],
        ["t2", "failed"],
      ]);
      expect(session.turns[1]?.error?.code).toBe("TOOL_RESULTS_MISMATCH");

      // The failed turn is over: even the right results are refused now.
      const late = await agent.execute({
        sessionId: "s",
        turnId: "t2",
        toolResults: [answer("c1"), answer("c2")],
      });
      expect(errorsOf(late)[0]).toMatchObject({
        code: "TURN_NOT_AWAITING_TOOLS",
        details: { turnId: "t2", status: "failed" },
      });

      const next = responseOf(
        await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Start over" }),
      );
      expect(next).toMatchObject({ kind: "final", primaryOutputText: "Fresh start." });
      // The provider continues from the last completed turn and never sees c1/c2 without outputs.
      expect(agent.provider.requests[2]?.continuation).toEqual({
        type: "previous_response",
        responseId: "resp_1",
      });
      expect(agent.provider.requests[2]?.input).toEqual([
        {
          type: "user_message",
          content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nStart over" }],
        },
      ]);
    });
  }

  it("answers a repeated mismatched continuation with the same failure, without calling the provider", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ toolCalls: [{ name: "read_file", arguments: { path: "a.ts" }, callId: "c1" }] });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read a" }));
    const first = await agent.execute({ sessionId: "s", turnId: "t1", toolResults: [answer("cX")] });
    const again = await agent.execute({ sessionId: "s", turnId: "t1", toolResults: [answer("cX")] });
    expect(errorsOf(first)[0].code).toBe("TOOL_RESULTS_MISMATCH");
    expect(again).toEqual(first);
    expect(agent.provider.requests).toHaveLength(1);
  });

  it("restarts a session whose first turn failed with the system prompt", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "read_file", arguments: { path: "a.ts" }, callId: "c1" }] },
      { text: "Hi again." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read a" }));
    errorsOf(
      await agent.execute({ sessionId: "s", turnId: "t1", toolResults: [answer("c1"), answer("c2")] }),
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Hello" }));
    expect(agent.provider.requests[1]?.continuation).toEqual({ type: "none" });
    expect(agent.provider.requests[1]?.input).toEqual([
      { type: "system_message", text: "You are Aptix.\n\nHelp with anything." },
      { type: "user_message", content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nHello" }] },
    ]);
  });
});
