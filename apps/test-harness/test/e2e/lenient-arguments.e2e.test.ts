/**
 * Arguments: strict to send, lenient to read (docs/security.md), over real HTTP on both providers. A model without
 * strict mode (Claude, a scripted one) leaves optional properties out; OpenAI's strict mode sends them as `null`.
 * Either way the built-in `create_file`, an MCP tool and the client's `read_file` run, rather than costing the
 * model a round of error outputs.
 */
import { defaultClientTools } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import {
  expectContinuation,
  expectFinal,
  PROVIDER_CONTEXTS,
  PROVIDERS_CATALOG,
  stdioMcpFixture,
  toolContinuation,
  uniqueId,
  userTurn,
} from "../../src/e2e/index.js";
import { setUpBothProviders } from "../support/both-providers.js";

const READ_FILE = defaultClientTools.find((tool) => tool.name === "read_file");

const providers = setUpBothProviders({
  catalog: {
    ...PROVIDERS_CATALOG,
    modes: [{ ...PROVIDERS_CATALOG.modes[0], tools: ["read_file", "create_file", "repo__report"] }],
    clientTools: [READ_FILE],
    serverTools: [{ name: "create_file", builtin: "create_file" }],
    mcpServers: [stdioMcpFixture("repo")],
  },
});
const { rigs } = providers;
const service = () => providers.service;

/** The model's three calls, with `report`'s optional mimeType as `given` (left out when undefined). */
function calls(mimeType?: null) {
  return [
    {
      id: "call_file",
      name: "create_file",
      input: { name: "notes.md", mimeType: "text/markdown", content: "# Notes\n" },
    },
    { id: "call_report", name: "repo__report", input: mimeType === undefined ? {} : { mimeType } },
    { id: "call_read", name: "read_file", input: { path: "src/a.ts" } },
  ];
}

describe.each(["openai", "anthropic"] as const)("on %s", (provider) => {
  it.each([
    ["left out", undefined],
    ["sent as null, as strict mode does", null],
  ] as const)("runs every tool whose optional properties the model %s", async (_, mimeType) => {
    const rig = rigs[provider];
    const sessionId = uniqueId(`lenient-${provider}`);
    rig.enqueue(
      { toolCalls: calls(mimeType), usage: { input: 40, output: 12 } },
      { text: ["Done."], usage: { input: 60, output: 3 } },
    );
    const extra = { conversationContextId: PROVIDER_CONTEXTS[provider] };
    const continuation = expectContinuation(await service().post(userTurn(sessionId, "t1", "Go", extra)));
    // The client gets read_file's arguments as its strict schema has them: the lines it left out are null.
    expect(continuation.toolCalls).toEqual([
      {
        toolCallId: "call_read",
        name: "read_file",
        argumentsJson: JSON.stringify({ path: "src/a.ts", startLine: null, endLine: null }),
      },
    ]);
    const final = expectFinal(
      await service().post(
        toolContinuation(sessionId, "t1", [{ toolCallId: "call_read", resultJson: '"export {}"' }]),
      ),
    );
    expect(final.primaryOutputText).toBe("Done.");
    // Both server tools ran (no argument refusal): a FileRef each, results and no error message.
    expect(final.toolResults?.map((result) => [result.name, result.errorMessage])).toEqual([
      ["create_file", undefined],
      ["repo__report", undefined],
    ]);
    expect(final.files?.map((file) => [file.name, file.mimeType])).toEqual([
      ["notes.md", "text/markdown"],
      ["summary.txt", "text/plain"],
    ]);
    expect(rig.requestCount()).toBe(2);
  });
});

it("sends OpenAI the MCP tool's schema in strict form, and Anthropic its own", async () => {
  const sessionId = uniqueId("lenient-wire");
  for (const provider of ["openai", "anthropic"] as const) {
    rigs[provider].enqueue({ text: ["Hi."], usage: { input: 5, output: 1 } });
    expectFinal(
      await service().post(
        userTurn(sessionId + provider, "t1", "Hi", { conversationContextId: PROVIDER_CONTEXTS[provider] }),
      ),
    );
  }
  const [openaiBody] = rigs.openai.rawBodies();
  const [anthropicBody] = rigs.anthropic.rawBodies();
  const report = (body: string | undefined) =>
    (JSON.parse(body ?? "{}") as { tools: Array<Record<string, unknown>> }).tools.find(
      (tool) => tool.name === "repo__report",
    );
  expect(report(openaiBody)).toMatchObject({
    strict: true,
    parameters: {
      type: "object",
      properties: { mimeType: { type: ["string", "null"] } },
      required: ["mimeType"],
      additionalProperties: false,
    },
  });
  expect(report(anthropicBody)).toMatchObject({
    input_schema: { type: "object", properties: { mimeType: { type: "string" } }, required: [] },
  });
});
