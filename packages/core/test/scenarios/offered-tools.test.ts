import { defaultClientTools } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import type { AgentCatalogConfig } from "../../src/catalog/agent-catalog.js";
import { createCreateFileTool, type ServerTool } from "../../src/index.js";
import { createTestAgent, PRINCIPAL, responseOf, resultOf, TEST_CATALOG } from "../support/test-agent.js";

/**
 * docs/security.md: the tools a mode offers are the only tools, and a call's arguments must fit its tool's schema.
 * `general` offers only `read_file` (the terminal agent's, strict schema); `create_file`, an MCP-style server tool
 * and `apply_patch` are configured, and offered by `wide` only.
 */
const context = TEST_CATALOG.conversationContexts[0] as AgentCatalogConfig["conversationContexts"][number];
const config: AgentCatalogConfig = {
  conversationContexts: [context, { ...context, id: "wide", defaultMode: "wide" }],
  modes: [
    { id: "general", displayName: "General", instructions: "", tools: ["read_file"], toolChoice: null },
    {
      id: "wide",
      displayName: "Wide",
      instructions: "",
      tools: ["read_file", "apply_patch", "create_file", "repo__echo"],
      toolChoice: null,
    },
  ],
  clientTools: [...defaultClientTools],
};

/** An MCP tool as `packages/tools-mcp` registers it: a server tool named `<server>__<tool>`. */
function echoTool(runs: string[]): ServerTool<{ text: string }> {
  return {
    definition: {
      name: "repo__echo",
      description: "Echo the text back.",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      strict: false,
    },
    parseArguments: (args) => ({ ok: true, value: args as { text: string } }),
    async execute(args) {
      runs.push(args.text);
      return { result: `echo: ${args.text}` };
    },
  };
}

async function narrowAgent() {
  const runs: string[] = [];
  const agent = await createTestAgent({
    config,
    serverTools: [createCreateFileTool() as ServerTool, echoTool(runs) as ServerTool],
    producedFiles: { publicUrl: "https://agent.example", ttlSeconds: 60 },
  });
  return { agent, runs };
}

const READ_A = { path: "a.ts", startLine: null, endLine: null };
const notAvailable = (name: string) => `Tool "${name}" is not available in mode "general".`;

describe("only the tools the mode offers (docs/security.md)", () => {
  it("runs no server tool and hands no client tool the mode did not offer; each goes back to the model, and the trace shows it", async () => {
    const { agent, runs } = await narrowAgent();
    agent.provider.enqueue(
      {
        toolCalls: [
          {
            name: "create_file",
            arguments: {
              name: "x.txt",
              mimeType: "text/plain",
              content: "x",
              encoding: null,
              description: null,
            },
            callId: "c_file",
          },
          { name: "repo__echo", arguments: { text: "hi" }, callId: "c_mcp" },
          {
            name: "apply_patch",
            arguments: { patch: "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+x\n" },
            callId: "c_patch",
          },
          { name: "read_file", arguments: READ_A, callId: "c_read" },
        ],
      },
      { text: "Read it." },
    );
    const paused = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Go" }));
    // Only the offered read_file reaches the client.
    expect(paused).toMatchObject({
      kind: "client_tool_continuation",
      toolCalls: [{ toolCallId: "c_read", name: "read_file" }],
    });
    expect(paused.kind === "client_tool_continuation" && paused.toolCalls).toHaveLength(1);

    const final = responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        toolResults: [{ toolCallId: "c_read", executionMs: 1, resultJson: '"A"' }],
      }),
    );
    const refusals = [
      ["c_file", "create_file"],
      ["c_mcp", "repo__echo"],
      ["c_patch", "apply_patch"],
    ].map(([callId, name]) => ({
      type: "function_call_output",
      callId,
      output: notAvailable(name as string),
      isError: true,
    }));
    expect(agent.provider.requests[1]?.input).toEqual([
      ...refusals,
      { type: "function_call_output", callId: "c_read", output: '"A"', isError: false },
    ]);
    // Nothing ran: no echo, no file, no server tool result.
    expect(runs).toEqual([]);
    expect(final).toMatchObject({ kind: "final", primaryOutputText: "Read it." });
    expect(final.kind === "final" && final.files).toBeUndefined();
    expect(final.kind === "final" && final.toolResults).toBeUndefined();

    // The trace has each refused call and the error output the model got for it.
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1"));
    expect(trace.llmCalls[0]?.response?.toolCalls.map((call) => call.name)).toEqual([
      "create_file",
      "repo__echo",
      "apply_patch",
      "read_file",
    ]);
    expect(trace.llmCalls[1]?.request?.input).toEqual(expect.arrayContaining(refusals));
    expect(trace.toolExecutions).toEqual([]);
  });

  it("hands a client at most as many calls as a continuation may answer; the rest go back to the model", async () => {
    const { agent } = await narrowAgent();
    const calls = Array.from({ length: 22 }, (_, index) => ({
      name: "read_file",
      arguments: READ_A,
      callId: `c${index}`,
    }));
    agent.provider.enqueue({ toolCalls: calls }, { text: "Read them." });
    const paused = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read" }));
    const handed = paused.kind === "client_tool_continuation" ? paused.toolCalls : [];
    expect(handed.map((call) => call.toolCallId)).toEqual(calls.slice(0, 20).map((call) => call.callId));

    const final = responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        toolResults: handed.map((call) => ({
          toolCallId: call.toolCallId,
          executionMs: 1,
          resultJson: '"A"',
        })),
      }),
    );
    expect(final).toMatchObject({ kind: "final", primaryOutputText: "Read them." });
    const refused = (agent.provider.requests[1]?.input ?? []).filter(
      (item) => item.type === "function_call_output" && item.isError,
    );
    expect(refused).toEqual(
      ["c20", "c21"].map((callId) => ({
        type: "function_call_output",
        callId,
        output:
          "Too many tool calls in one response: the client runs at most 20 at once. Call read_file again once these have answered.",
        isError: true,
      })),
    );
  });

  it("hands no call whose arguments break the tool's schema to the client, and tells the model which path", async () => {
    const { agent } = await narrowAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "read_file", arguments: { path: 5, evil: true }, callId: "c_bad" }] },
      { toolCalls: [{ name: "read_file", arguments: READ_A, callId: "c_good" }] },
    );
    const paused = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read" }));
    // The bad call never reached the client; the model was told and made a good one.
    expect(paused).toMatchObject({
      kind: "client_tool_continuation",
      toolCalls: [{ toolCallId: "c_good", name: "read_file", argumentsJson: JSON.stringify(READ_A) }],
    });
    const [refusal] = agent.provider.requests[1]?.input ?? [];
    expect(refusal).toMatchObject({ type: "function_call_output", callId: "c_bad", isError: true });
    const output = (refusal as { output: string }).output;
    // The value given wrong first, then what is unknown; the omitted startLine and endLine read as null.
    expect(output).toBe("Invalid arguments for read_file: path must be a string; evil is not allowed");
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1"));
    expect(trace.llmCalls[1]?.request?.input).toContainEqual(refusal);
  });

  it("still offers and runs what the turn's mode offers: a call to it is checked, not refused", async () => {
    const { agent, runs } = await narrowAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "repo__echo", arguments: { text: 7 }, callId: "c1" }] },
      { toolCalls: [{ name: "repo__echo", arguments: { text: "hi" }, callId: "c2" }] },
      { text: "Echoed." },
    );
    const final = responseOf(
      await agent.execute({
        sessionId: "w",
        turnId: "t1",
        instruction: "Echo",
        conversationContextId: "wide",
      }),
    );
    expect(runs).toEqual(["hi"]);
    expect(agent.provider.requests[1]?.input).toEqual([
      {
        type: "function_call_output",
        callId: "c1",
        output: "Invalid arguments for repo__echo: text must be a string",
        isError: true,
      },
    ]);
    expect(
      final.kind === "final" && final.toolResults?.map((result) => result.errorMessage ?? result.resultJson),
    ).toEqual(["Invalid arguments for repo__echo: text must be a string", '"echo: hi"']);
  });
});
