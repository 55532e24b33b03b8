import { describe, expect, it } from "vitest";
import { AgentCatalog, type ServerTool } from "../../src/index.js";
import {
  catalogWithModes,
  createTestAgent,
  fileIdOf,
  lookupTool,
  PRINCIPAL,
  responseOf,
  resultOf,
  TEST_CATALOG,
} from "../support/test-agent.js";

function catalogOf(config = TEST_CATALOG) {
  const created = AgentCatalog.create(config, [lookupTool as ServerTool]);
  if (!created.successful) throw new Error(created.errors[0].message);
  return created.result;
}

describe("tools on every call", () => {
  it("offers the mode's full tool list on every call of a multi-call turn and of its continuation rounds", async () => {
    const agent = await createTestAgent();
    const catalog = catalogOf();
    const expected = catalog.toolsFor(catalog.modes.get("general"));
    agent.provider.enqueue(
      { toolCalls: [{ name: "lookup", arguments: { query: "a" }, callId: "s1" }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "a.ts" }, callId: "c1" }] },
      { toolCalls: [{ name: "lookup", arguments: { query: "b" }, callId: "s2" }] },
      { text: "Done." },
      { text: "Next turn." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Go" }));
    responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: '"A"' }],
      }),
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Again" }));
    expect(agent.provider.requests).toHaveLength(5);
    for (const request of agent.provider.requests) expect(request.tools).toEqual(expected);
    expect(expected.map((tool) => tool.name)).toEqual(["read_file", "lookup", "agent_change_mode"]);
    expect(expected.at(-1)).toMatchObject({ name: "agent_change_mode", strict: true });
    expect(agent.provider.requests.map((request) => request.continuation)).toEqual([
      { type: "none" },
      { type: "previous_response", responseId: "resp_1" },
      { type: "previous_response", responseId: "resp_2" },
      { type: "previous_response", responseId: "resp_3" },
      { type: "previous_response", responseId: "resp_4" },
    ]);
  });
});

describe("a mode's forced tool choice", () => {
  // The review mode also gets the server-side lookup, so one round can make several calls.
  const reviewWithLookup = catalogWithModes({
    id: "review",
    displayName: "Code Review",
    instructions: "Review the code you are shown.",
    welcomeMessage: "Switched to code review.",
    tools: ["read_file", "submit_review", "lookup"],
    toolChoice: "submit_review",
  });

  it("forces the tool on the first call of each turn only, not on later calls nor continuation rounds", async () => {
    const agent = await createTestAgent({ config: reviewWithLookup });
    agent.provider.enqueue(
      { toolCalls: [{ name: "lookup", arguments: { query: "style guide" }, callId: "s1" }] },
      { toolCalls: [{ name: "submit_review", arguments: { verdict: "ok" }, callId: "c1" }] },
      { text: "Review submitted." },
      { toolCalls: [{ name: "submit_review", arguments: { verdict: "again" }, callId: "c2" }] },
    );
    const paused = responseOf(
      await agent.execute({
        sessionId: "r1",
        turnId: "t1",
        instruction: "Review a.ts",
        conversationContextId: "reviewing",
      }),
    );
    expect(paused).toMatchObject({ kind: "client_tool_continuation", modeDisplayName: "Code Review" });
    const final = responseOf(
      await agent.execute({
        sessionId: "r1",
        turnId: "t1",
        toolResults: [{ toolCallId: "c1", executionMs: 2, resultJson: '{"id":7}' }],
      }),
    );
    expect(final).toMatchObject({ kind: "final", primaryOutputText: "Review submitted." });
    responseOf(await agent.execute({ sessionId: "r1", turnId: "t2", instruction: "Review b.ts" }));

    expect(agent.provider.requests.map((request) => request.toolChoice)).toEqual([
      { type: "tool", name: "submit_review" },
      { type: "auto" },
      { type: "auto" },
      { type: "tool", name: "submit_review" },
    ]);
    expect(agent.provider.requests[0]?.input[0]).toEqual({
      type: "system_message",
      text: "You review code.\n\nReview the code you are shown.",
    });
    expect(agent.provider.requests[0]?.tools.map((tool) => tool.name)).toEqual([
      "read_file",
      "submit_review",
      "lookup",
      "agent_change_mode",
    ]);
    const session = resultOf(await agent.service.getSession(PRINCIPAL, "r1"));
    expect(session.mode).toBe("review");
    expect(session.conversationContextId).toBe("reviewing");
  });

  it("keeps the forced choice when the turn's first call is replayed after a lost continuation", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Ready." },
      { toolCalls: [{ name: "submit_review", arguments: {}, callId: "c1" }] },
    );
    responseOf(
      await agent.execute({
        sessionId: "r1",
        turnId: "t1",
        instruction: "Hi",
        conversationContextId: "reviewing",
      }),
    );
    agent.provider.forget("resp_1");
    const paused = responseOf(
      await agent.execute({ sessionId: "r1", turnId: "t2", instruction: "Review b.ts" }),
    );
    expect(paused).toMatchObject({
      kind: "client_tool_continuation",
      toolCalls: [{ toolCallId: "c1", name: "submit_review" }],
    });
    expect(agent.provider.requests.map((request) => [request.continuation.type, request.toolChoice])).toEqual(
      [
        ["none", { type: "tool", name: "submit_review" }],
        ["previous_response", { type: "tool", name: "submit_review" }],
        ["replay", { type: "tool", name: "submit_review" }],
      ],
    );
  });

  it("never forces a tool in a mode without toolChoice", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "a" });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    expect(agent.provider.requests[0]?.toolChoice).toEqual({ type: "auto" });
  });
});

describe("a server tool loop", () => {
  it("runs lookup → lookup → text in one request and reports tool results and files on the final response", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Looking.", toolCalls: [{ name: "lookup", arguments: { query: "alpha" }, callId: "s1" }] },
      { toolCalls: [{ name: "lookup", arguments: { query: "beta" }, callId: "s2" }] },
      { text: "Alpha and beta found." },
    );
    const final = responseOf(
      await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Find alpha and beta" }),
    );
    if (final.kind !== "final") throw new Error("expected a final response");
    expect(final.primaryOutputText).toBe("Alpha and beta found.");
    expect(final.toolResults).toEqual([
      { toolCallId: "s1", name: "lookup", executionMs: 0, resultJson: '{"found":"answer to alpha"}' },
      { toolCallId: "s2", name: "lookup", executionMs: 0, resultJson: '{"found":"answer to beta"}' },
    ]);
    expect(final.usage).toEqual({ inputTokens: 30, outputTokens: 15, totalTokens: 45, llmCalls: 3 });
    expect(final.files).toHaveLength(2);
    expect(final.files?.[0]).toEqual({
      name: "answer.txt",
      mimeType: "text/plain",
      url: expect.stringMatching(/^\/v1\/files\/file_\d+$/),
      sizeBytes: 15,
      contentHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      contentExpires: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });

    // Each tool's output goes back to the model as the next call's input.
    expect(agent.provider.requests.map((request) => request.input.at(-1))).toEqual([
      {
        type: "user_message",
        content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nFind alpha and beta" }],
      },
      { type: "function_call_output", callId: "s1", output: '{"found":"answer to alpha"}', isError: false },
      { type: "function_call_output", callId: "s2", output: '{"found":"answer to beta"}', isError: false },
    ]);

    const [alphaRef, betaRef] = final.files ?? [];
    if (!alphaRef || !betaRef) throw new Error("files missing");
    const alpha = await agent.service.getFile(PRINCIPAL, fileIdOf(alphaRef.url));
    if (!alpha.successful) throw new Error(alpha.errors[0].message);
    expect(new TextDecoder().decode(alpha.result.content)).toBe("answer to alpha");
    expect(alpha.result.file).toMatchObject({
      name: "answer.txt",
      principal: PRINCIPAL,
      contentHash: alphaRef.contentHash,
      sizeBytes: 15,
    });
    const beta = await agent.service.getFile(PRINCIPAL, fileIdOf(betaRef.url));
    expect(beta.successful && new TextDecoder().decode(beta.result.content)).toBe("answer to beta");

    const stranger = await agent.service.getFile("bob", fileIdOf(alphaRef.url));
    expect(stranger).toEqual({
      successful: false,
      errors: [
        {
          code: "FILE_NOT_FOUND",
          message: `No file "${fileIdOf(alphaRef.url)}".`,
          details: { fileId: fileIdOf(alphaRef.url) },
        },
      ],
      warnings: [],
    });
  });

  it("refuses a call to no offered tool back to the model without reporting it as a server tool result (AGN-033 §5.3)", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      {
        toolCalls: [
          { name: "repo.read", arguments: { path: "a.ts" }, callId: "x1" },
          { name: "read_file", arguments: "not json", callId: "x2" },
          { name: "lookup", arguments: { query: "alpha" }, callId: "s1" },
        ],
      },
      { text: "I cannot read that file." },
    );
    const final = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read a.ts" }));
    expect(agent.provider.requests[1]?.input).toEqual([
      {
        type: "function_call_output",
        callId: "x1",
        output: 'Tool "repo.read" is not available in mode "general".',
        isError: true,
      },
      {
        type: "function_call_output",
        callId: "x2",
        output: "Invalid arguments for read_file: arguments must be a JSON object",
        isError: true,
      },
      { type: "function_call_output", callId: "s1", output: '{"found":"answer to alpha"}', isError: false },
    ]);
    expect(final).toMatchObject({ kind: "final", primaryOutputText: "I cannot read that file." });
    expect(final.kind === "final" && final.toolResults).toEqual([
      { toolCallId: "s1", name: "lookup", executionMs: 0, resultJson: '{"found":"answer to alpha"}' },
    ]);
  });

  it("sends a server tool's argument error back to the model, which then corrects itself", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "lookup", arguments: { q: "typo" }, callId: "s1" }] },
      { toolCalls: [{ name: "lookup", arguments: "not json", callId: "s2" }] },
      { toolCalls: [{ name: "lookup", arguments: { query: "fixed" }, callId: "s3" }] },
      { text: "Fixed." },
    );
    const final = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Find" }));
    expect(agent.provider.requests[1]?.input).toEqual([
      {
        type: "function_call_output",
        callId: "s1",
        output: "Invalid arguments for lookup: query is required",
        isError: true,
      },
    ]);
    expect(agent.provider.requests[2]?.input).toEqual([
      {
        type: "function_call_output",
        callId: "s2",
        output: "Invalid arguments for lookup: arguments must be a JSON object",
        isError: true,
      },
    ]);
    expect(final.kind === "final" && final.toolResults).toEqual([
      {
        toolCallId: "s1",
        name: "lookup",
        executionMs: 0,
        errorMessage: "Invalid arguments for lookup: query is required",
      },
      {
        toolCallId: "s2",
        name: "lookup",
        executionMs: 0,
        errorMessage: "Invalid arguments for lookup: arguments must be a JSON object",
      },
      { toolCallId: "s3", name: "lookup", executionMs: 0, resultJson: '{"found":"answer to fixed"}' },
    ]);
  });
});
