import type { UserTurnRequest } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { DEFAULT_LEASE_MS } from "../../src/entry/agent-service.js";
import {
  createTestAgent,
  errorsOf,
  PRINCIPAL,
  responseOf,
  resultOf,
  type TestAgent,
} from "../support/test-agent.js";

/** What turn t1 sent again with another body answers. */
const TURN_ID_CONFLICT = {
  successful: false,
  errors: [
    {
      code: "TURN_ID_CONFLICT",
      message: 'Turn "t1" was already sent with a different body.',
      details: { turnId: "t1" },
    },
  ],
  warnings: [],
};

describe("idempotent requests (docs/architecture.md, Turn lifecycle)", () => {
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
    expect(errorsOf(first)[0].code).toBe("TOOL_FAILED");
    expect(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Boom" })).toEqual(first);
    expect(agent.provider.requests).toHaveLength(1);
  });

  it("refuses the same turnId with a different body as TURN_ID_CONFLICT", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Once." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    const conflict = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi!" });
    expect(conflict).toEqual(TURN_ID_CONFLICT);
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

/**
 * Two requests for one new turn racing: the late one read the session before the first one started the turn,
 * and claims it only afterwards, so it finds the turn only once it holds the session.
 */
describe("identical user turns racing (docs/architecture.md, Turn lifecycle)", () => {
  /** Sends `body`, which reads the session now and waits to claim it until `claim.release()`. */
  async function readThenWait(agent: TestAgent, body: UserTurnRequest) {
    const claim = agent.store.holdNextClaim();
    const late = agent.execute(body);
    await claim.entered;
    return { late, claim };
  }

  const request = { sessionId: "s", turnId: "t1", instruction: "Hi" };

  it("answers the late one with the stored response once the first one's turn has ended", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Once." });
    const { late, claim } = await readThenWait(agent, request);
    const first = await agent.execute(request);
    expect(responseOf(first)).toMatchObject({ kind: "final", primaryOutputText: "Once." });
    claim.release();
    expect(await late).toEqual(first);
    expect(agent.provider.requests).toHaveLength(1);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns).toHaveLength(1);
  });

  it("answers the late one with the stored tool calls when the first one's turn awaits client tools", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ toolCalls: [{ name: "read_file", arguments: { path: "a" }, callId: "c1" }] });
    const { late, claim } = await readThenWait(agent, request);
    const first = await agent.execute(request);
    expect(responseOf(first)).toMatchObject({ kind: "client_tool_continuation" });
    claim.release();
    expect(await late).toEqual(first);
    // The turn still awaits its tool results: the late request abandoned nothing.
    expect(resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1")).status).toBe(
      "awaiting_client_tools",
    );
  });

  it("answers the late one SESSION_BUSY while the first one's turn runs", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Once." });
    const { late, claim } = await readThenWait(agent, request);
    const held = agent.provider.holdNextCall();
    const first = agent.execute(request);
    await held.entered;
    claim.release();
    expect(errorsOf(await late)[0]?.code).toBe("SESSION_BUSY");
    held.release();
    responseOf(await first);
    expect(await agent.execute(request)).toEqual(await first);
  });

  it("runs the turn again for the late one when the first one's instance stopped and its lease expired", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Run again." }, { text: "Zombie." });
    const { late, claim } = await readThenWait(agent, request);
    const held = agent.provider.holdNextCall();
    const zombie = agent.execute(request);
    await held.entered;
    agent.clock.advance(DEFAULT_LEASE_MS);
    claim.release();
    const retried = await late;
    expect(responseOf(retried)).toMatchObject({
      kind: "final",
      turnId: "t1",
      primaryOutputText: "Run again.",
    });
    expect(await agent.execute(request)).toEqual(retried);
    held.release();
    expect(errorsOf(await zombie)[0]?.code).toBe("TURN_INTERRUPTED");
    expect(resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1"))).toMatchObject({
      status: "completed",
      error: null,
    });
  });

  it("still refuses a different body for the same turnId as TURN_ID_CONFLICT", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Once." });
    const { late, claim } = await readThenWait(agent, { ...request, instruction: "Hi!" });
    responseOf(await agent.execute(request));
    claim.release();
    expect(await late).toEqual(TURN_ID_CONFLICT);
    expect(agent.provider.requests).toHaveLength(1);
  });
});

/**
 * Two identical continuations racing: the late one read the turn awaiting its results, and claims the session
 * only after the first one resumed it, so it finds the turn moved on once it holds the session.
 */
describe("identical continuations racing (docs/architecture.md, Turn lifecycle)", () => {
  const continuation = {
    sessionId: "s",
    turnId: "t1",
    toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: '"A"' }],
  };

  /** A turn t1 awaiting call c1, and `continuation` sent: it reads the turn now and waits to claim it. */
  async function pausedThenLate(agent: TestAgent) {
    agent.provider.enqueue({ toolCalls: [{ name: "read_file", arguments: { path: "a.ts" }, callId: "c1" }] });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read" }));
    const claim = agent.store.holdNextClaim();
    const late = agent.execute(continuation);
    await claim.entered;
    return { late, claim };
  }

  it("answers the late one with the first one's stored answer once its round has ended", async () => {
    const agent = await createTestAgent();
    const { late, claim } = await pausedThenLate(agent);
    agent.provider.enqueue({ text: "Done." });
    const first = await agent.execute(continuation);
    expect(responseOf(first)).toMatchObject({ kind: "final", primaryOutputText: "Done." });
    claim.release();
    expect(await late).toEqual(first);
    expect(agent.provider.requests).toHaveLength(2);
    expect(resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1")).rounds).toHaveLength(2);
  });

  it("answers the late one SESSION_BUSY while the first one's round runs", async () => {
    const agent = await createTestAgent();
    const { late, claim } = await pausedThenLate(agent);
    agent.provider.enqueue({ text: "Done." });
    const held = agent.provider.holdNextCall();
    const first = agent.execute(continuation);
    await held.entered;
    claim.release();
    expect(errorsOf(await late)[0]?.code).toBe("SESSION_BUSY");
    held.release();
    expect(responseOf(await first)).toMatchObject({ kind: "final", primaryOutputText: "Done." });
    expect(await agent.execute(continuation)).toEqual(await first);
    expect(agent.provider.requests).toHaveLength(2);
  });
});
