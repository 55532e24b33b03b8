import { describe, expect, it } from "vitest";
import { createTestAgent, errorsOf, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

describe("idempotent requests (docs/architecture.md)", () => {
  it("answers the same user turn again with the stored response and no provider call, whatever `stream` says", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Once." });
    const request = { sessionId: "s", turnId: "t1", instruction: "Hi", repo: "web" };
    const first = await agent.execute(request);
    const again = await agent.execute({ repo: "web", instruction: "Hi", turnId: "t1", sessionId: "s" });
    const streamed = await agent.execute({ ...request, stream: true });
    expect(responseOf(first)).toMatchObject({ primaryOutputText: "Once." });
    expect(again).toEqual(first);
    expect(streamed).toEqual(first);
    expect(agent.provider.requests).toHaveLength(1);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns).toHaveLength(1);
  });

  it("replays a failed user turn's failure instead of running it again", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "lookup", arguments: { query: "x", explode: true } }] },
      { text: "unused" },
    );
    const first = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Boom" });
    expect(errorsOf(first)[0].code).toBe("SERVER_TOOL_FAILED");
    expect(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Boom" })).toEqual(first);
    expect(agent.provider.requests).toHaveLength(1);
  });

  it("refuses the same turnId with a different body as TURN_ID_CONFLICT", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Once." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    const conflict = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi!" });
    expect(conflict).toEqual({
      successful: false,
      errors: [
        {
          code: "TURN_ID_CONFLICT",
          message: 'Turn "t1" was already sent with a different body.',
          details: { turnId: "t1" },
        },
      ],
      warnings: [],
    });
    // A tool continuation is no user turn: the completed turn is not awaiting tools.
    const asContinuation = await agent.execute({
      sessionId: "s",
      turnId: "t1",
      toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: "1" }],
    });
    expect(errorsOf(asContinuation)[0].code).toBe("TURN_NOT_AWAITING_TOOLS");
    expect(agent.provider.requests).toHaveLength(1);
  });

  it("answers an already-applied continuation with its stored response and no provider call", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "read_file", arguments: { path: "a.ts" }, callId: "c1" }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "b.ts" }, callId: "c2" }] },
      { text: "Done." },
    );
    const paused = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read" }));
    const round1 = {
      sessionId: "s",
      turnId: "t1",
      toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: '"A"' }],
    };
    const second = await agent.execute(round1);
    expect(responseOf(second)).toMatchObject({
      kind: "client_tool_continuation",
      toolCalls: [{ toolCallId: "c2" }],
    });
    const round2 = {
      sessionId: "s",
      turnId: "t1",
      toolResults: [{ toolCallId: "c2", executionMs: 1, resultJson: '"B"' }],
    };
    const final = await agent.execute(round2);
    expect(responseOf(final)).toMatchObject({ kind: "final", primaryOutputText: "Done." });
    expect(agent.provider.requests).toHaveLength(3);

    expect(await agent.execute(round1)).toEqual(second);
    expect(await agent.execute(round2)).toEqual(final);
    expect(responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read" }))).toEqual(
      paused,
    );
    expect(agent.provider.requests).toHaveLength(3);
  });

  it("refuses a new continuation body for a completed turn as TURN_NOT_AWAITING_TOOLS", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "read_file", arguments: { path: "a.ts" }, callId: "c1" }] },
      { text: "Done." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read" }));
    responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: '"A"' }],
      }),
    );
    const different = await agent.execute({
      sessionId: "s",
      turnId: "t1",
      toolResults: [{ toolCallId: "c1", executionMs: 1, errorMessage: "changed my mind" }],
    });
    expect(different).toEqual({
      successful: false,
      errors: [
        {
          code: "TURN_NOT_AWAITING_TOOLS",
          message: 'Turn "t1" is completed, not awaiting client tools.',
          details: { turnId: "t1", status: "completed" },
        },
      ],
      warnings: [],
    });
    expect(agent.provider.requests).toHaveLength(2);
  });

  it("answers a continuation for an unknown turn with TURN_NOT_FOUND and for an unknown session with SESSION_NOT_FOUND", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Hi." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    const toolResults = [{ toolCallId: "c1", executionMs: 1, resultJson: "1" }];
    expect(await agent.execute({ sessionId: "s", turnId: "t9", toolResults })).toEqual({
      successful: false,
      errors: [
        { code: "TURN_NOT_FOUND", message: 'No turn "t9" in this session.', details: { turnId: "t9" } },
      ],
      warnings: [],
    });
    expect(await agent.execute({ sessionId: "nope", turnId: "t1", toolResults })).toEqual({
      successful: false,
      errors: [{ code: "SESSION_NOT_FOUND", message: 'No session "nope".', details: { sessionId: "nope" } }],
      warnings: [],
    });
    // A continuation never creates a session.
    expect(errorsOf(await agent.service.getSession(PRINCIPAL, "nope"))[0].code).toBe("SESSION_NOT_FOUND");
    expect(agent.provider.requests).toHaveLength(1);
  });
});
