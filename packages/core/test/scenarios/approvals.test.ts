import { describe, expect, it } from "vitest";
import type { ServerTool } from "../../src/index.js";
import { createTestAgent, lookupTool, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

/** `lookup`, from an MCP server "kb", asking first (docs/server-tools.md); counts its runs. */
function askingLookup() {
  const runs: string[] = [];
  const tool: ServerTool = {
    ...(lookupTool as ServerTool),
    approval: "always",
    server: "kb",
    async execute(args, context) {
      runs.push((args as { query: string }).query);
      return lookupTool.execute(args as { query: string }, context);
    },
  };
  return { tool, runs };
}

/** Turn t1 of session s: the model calls `lookup` (which asks first) and `read_file` in one response. */
async function pausedOnApproval(then: Array<{ text: string }> = [{ text: "Done." }]) {
  const { tool, runs } = askingLookup();
  const agent = await createTestAgent({ serverTools: [tool] });
  agent.provider.enqueue(
    {
      toolCalls: [
        { name: "lookup", arguments: { query: "orders" }, callId: "c_lookup" },
        { name: "read_file", arguments: { path: "a.ts" }, callId: "c_read" },
      ],
    },
    ...then,
  );
  const paused = responseOf(
    await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Look and read" }),
  );
  return { agent, runs, paused };
}

const readResult = { toolCallId: "c_read", executionMs: 1, resultJson: '"export {}"' };
const continuation = (approval: { resultJson?: string; errorMessage?: string }) => ({
  sessionId: "s",
  turnId: "t1",
  toolResults: [{ toolCallId: "c_lookup", executionMs: 2, ...approval }, readResult],
});

describe("server tools that ask first (docs/server-tools.md)", () => {
  it("hands the client an aptix_approve call in the model's order, running nothing before the answer", async () => {
    const { runs, paused } = await pausedOnApproval();
    expect(paused).toMatchObject({
      kind: "client_tool_continuation",
      toolCalls: [
        {
          toolCallId: "c_lookup",
          name: "aptix_approve",
          argumentsJson: JSON.stringify({
            tool: "lookup",
            argumentsJson: '{"query":"orders"}',
            server: "kb",
          }),
        },
        { toolCallId: "c_read", name: "read_file" },
      ],
    });
    expect(runs).toEqual([]);
  });

  it("runs an approved call once, lists it with who approved it, and never again on the same continuation sent again", async () => {
    const { agent, runs } = await pausedOnApproval();
    const request = continuation({ resultJson: '{"approved":true}' });
    const final = responseOf(await agent.execute(request));
    expect(runs).toEqual(["orders"]);
    expect(final).toMatchObject({
      kind: "final",
      primaryOutputText: "Done.",
      toolResults: [{ toolCallId: "c_lookup", name: "lookup", resultJson: '{"found":"answer to orders"}' }],
    });
    // The model got the tool's output and the client's, in its calls' order.
    expect(agent.provider.requests[1]?.input).toEqual([
      {
        type: "function_call_output",
        callId: "c_lookup",
        output: '{"found":"answer to orders"}',
        isError: false,
      },
      { type: "function_call_output", callId: "c_read", output: '"export {}"', isError: false },
    ]);
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1"));
    expect(trace.toolExecutions[0]).toMatchObject({ approval: { approved: true, decidedBy: PRINCIPAL } });
    expect(responseOf(await agent.execute(request))).toEqual(final);
    expect(runs).toEqual(["orders"]);
  });

  it.each([
    [
      "declined with a message",
      { resultJson: '{"approved":false,"message":"Not on prod."}' },
      " Not on prod.",
    ],
    ["answered by a client that does not know the call", { errorMessage: "unknown tool aptix_approve" }, ""],
    ["answered with anything else", { resultJson: '"yes"' }, ""],
  ])("tells the model a call %s was not approved, and runs nothing", async (_, answer, message) => {
    const { agent, runs } = await pausedOnApproval();
    const final = responseOf(await agent.execute(continuation(answer)));
    expect(runs).toEqual([]);
    // Nothing ran, so the final answer lists no tool result; the trace keeps the decline.
    expect(final).toMatchObject({ kind: "final" });
    expect(final).not.toHaveProperty("toolResults");
    expect(agent.provider.requests[1]?.input[0]).toEqual({
      type: "function_call_output",
      callId: "c_lookup",
      output: `The user did not approve this call of lookup.${message}`,
      isError: true,
    });
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1"));
    expect(trace.toolExecutions[0]).toMatchObject({ approval: { approved: false, decidedBy: PRINCIPAL } });
  });

  it("runs nothing of a turn cancelled while it waited for the approval", async () => {
    const { agent, runs } = await pausedOnApproval([]);
    expect(resultOf(await agent.service.cancelTurn(PRINCIPAL, "s", "t1"))).toMatchObject({
      status: "cancelled",
    });
    const refused = await agent.execute(continuation({ resultJson: '{"approved":true}' }));
    expect(refused.successful ? undefined : refused.errors[0]?.code).toBe("TURN_NOT_AWAITING_TOOLS");
    expect(runs).toEqual([]);
  });

  it("refuses a catalog that names a tool aptix_approve", async () => {
    await expect(
      createTestAgent({
        config: {
          conversationContexts: [{ id: "c", bootPrompt: "b", model: "m", provider: "scripted" }],
          modes: [{ id: "general", displayName: "G", instructions: "", tools: [], toolChoice: null }],
          clientTools: [{ name: "aptix_approve", description: "x", parameters: { type: "object" } }],
        },
      }),
    ).rejects.toThrow(/reserved/);
  });
});
