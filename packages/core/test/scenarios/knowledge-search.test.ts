import { describe, expect, it } from "vitest";
import { InMemoryWorkspaceIndex } from "../../src/in-memory/in-memory-workspace-index.js";
import {
  createKnowledgeSearchTool,
  type ServerTool,
  sha256ContentHashService,
  WorkspaceKnowledge,
} from "../../src/index.js";
import { catalogWithModes, createTestAgent, errorsOf, PRINCIPAL, responseOf } from "../support/test-agent.js";

const CONFIG_TS = "export function parseConfig(text: string) {\n  return JSON.parse(text);\n}\n";

const GENERAL_WITH_SEARCH = catalogWithModes({
  id: "general",
  displayName: "General",
  instructions: "Help with anything.",
  tools: ["knowledge_search"],
  toolChoice: null,
});

async function knowledgeAgent() {
  let ids = 0;
  const knowledge = new WorkspaceKnowledge({
    index: new InMemoryWorkspaceIndex(),
    hashes: sha256ContentHashService,
    ids: { newId: (prefix) => `${prefix}_${++ids}` },
  });
  await knowledge.upsert({
    principal: PRINCIPAL,
    workspaceId: "ws",
    documents: [{ path: "src/config.ts", contents: CONFIG_TS }],
  });
  const agent = await createTestAgent({
    config: GENERAL_WITH_SEARCH,
    serverTools: [createKnowledgeSearchTool(knowledge) as ServerTool],
  });
  return agent;
}

const search = (callId: string, args: Record<string, unknown>) => ({
  toolCalls: [{ name: "knowledge_search", callId, arguments: args }],
});
const CHUNK = [
  "[CONTEXT]",
  "",
  "=== CHUNK 1 ===",
  "Id: ctx_1",
  "Path: src/config.ts",
  "Lines: 1-3",
  "Language: typescript",
  "```typescript",
  CONFIG_TS.trimEnd(),
  "```",
].join("\n");

describe("knowledge_search (docs/server-tools.md)", () => {
  it("searches the request's workspace, then the session's, and answers chunks in the [CONTEXT] chunk format", async () => {
    const agent = await knowledgeAgent();
    agent.provider.enqueue(
      search("k1", { query: "parseConfig" }),
      { text: "Found it." },
      search("k2", {
        query: "parse config",
        ragScope: [{ key: "language", operator: "==", values: ["typescript"] }],
      }),
      { text: "Again." },
    );
    responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        instruction: "Where is the config parsed?",
        workspaceId: "ws",
      }),
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "And again?" }));
    const outputs = agent.provider.requests
      .map((request) => request.input.at(-1))
      .filter((item) => item?.type === "function_call_output");
    expect(outputs).toEqual([
      { type: "function_call_output", callId: "k1", output: JSON.stringify(CHUNK), isError: false },
      { type: "function_call_output", callId: "k2", output: JSON.stringify(CHUNK), isError: false },
    ]);
  });

  it("tells the model when nothing matches, when the turn names no workspace, and when its arguments are bad", async () => {
    const agent = await knowledgeAgent();
    agent.provider.enqueue(
      search("k1", { query: "zebra" }),
      search("k2", { query: "config", limit: 500 }),
      { text: "Nothing." },
      search("k3", { query: "config" }),
      { text: "No workspace." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Find", workspaceId: "ws" }));
    responseOf(await agent.execute({ sessionId: "other", turnId: "t1", instruction: "Find" }));
    const outputs = agent.provider.requests.flatMap((request) =>
      request.input.filter((item) => item.type === "function_call_output"),
    );
    expect(
      outputs.map((item) => item.type === "function_call_output" && [item.output, item.isError]),
    ).toEqual([
      ['"No chunk of workspace ws matches \\"zebra\\"."', false],
      [expect.stringMatching(/^Invalid arguments for knowledge_search: .*limit/), true],
      ["This conversation names no workspace, so there is nothing to search.", true],
    ]);
  });

  it("fails the turn TOOL_FAILED without what a failing index threw, and the session goes on", async () => {
    const failing = createKnowledgeSearchTool({
      search: async () => {
        throw new Error('Failed query: select … from "chunks" params: alice,secret-boot-prompt');
      },
    });
    const agent = await createTestAgent({
      config: GENERAL_WITH_SEARCH,
      serverTools: [failing as ServerTool],
    });
    agent.provider.enqueue(search("k1", { query: "config" }), { text: "Later." });
    const [failed] = errorsOf(
      await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Find", workspaceId: "ws" }),
    );
    expect(failed).toMatchObject({
      code: "TOOL_FAILED",
      message: "Server tool knowledge_search failed: the workspace index could not be read",
    });
    expect(JSON.stringify(failed)).not.toContain("secret");
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Go on" }));
  });
});
