import { describe, expect, it } from "vitest";
import { approvalHandler } from "../src/approval-request.js";
import type { ToolContext } from "../src/tool-handler.js";

const context: ToolContext = {
  sessionId: "s1",
  turnId: "t1",
  toolCallId: "call_1",
  name: "aptix_approve",
  argumentsJson: "{}",
  signal: undefined,
};

describe("approvalHandler", () => {
  it("asks approve with the call's arguments as the protocol reads them, and where it was asked", async () => {
    const asked: unknown[] = [];
    const handler = approvalHandler((request) => {
      asked.push(request);
      return { approved: false, message: "Not today." };
    });
    const args = { tool: "make_file", argumentsJson: '{"name":"a.md"}', server: null, later: "field" };
    expect(await handler(args, context)).toEqual({ approved: false, message: "Not today." });
    expect(asked).toEqual([
      {
        tool: "make_file",
        argumentsJson: '{"name":"a.md"}',
        server: null,
        sessionId: "s1",
        turnId: "t1",
        toolCallId: "call_1",
      },
    ]);
  });

  it("declines a request it cannot read, naming the field, without asking", async () => {
    let asked = false;
    const handler = approvalHandler(() => {
      asked = true;
      return true;
    });
    const answer = await handler({ tool: "make_file", argumentsJson: 5, server: null }, context);
    expect(answer).toMatchObject({ approved: false, message: expect.stringContaining("argumentsJson") });
    expect(asked).toBe(false);
  });
});
