import { describe, expect, it } from "vitest";
import { DEFAULT_LEASE_MS, type ServerTool } from "../../src/index.js";
import { newTurnRecord } from "../../src/testing/store-fixtures.js";
import {
  createTestAgent,
  errorsOf,
  lookupTool,
  PRINCIPAL,
  responseOf,
  resultOf,
  TEST_CATALOG,
} from "../support/test-agent.js";

const busy = (sessionId: string) => ({
  successful: false,
  errors: [
    {
      code: "SESSION_BUSY",
      message: "Another turn of this session is running; retry when it has finished.",
      details: { sessionId },
    },
  ],
  warnings: [],
});
const CRASHED = {
  code: "INTERNAL",
  message: "The server instance running this turn stopped before it finished.",
};
const LEASE_LOST = {
  code: "INTERNAL",
  message:
    "This server instance lost the session's lease while the turn ran; another instance failed the turn.",
};

describe("one turn per session at a time", () => {
  it("answers SESSION_BUSY while a turn runs, and both requests settle once it is released", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "First." }, { text: "Second." });
    agent.stateless.enqueue({ text: "Elsewhere." });
    const held = agent.provider.holdNextCall();
    const running = agent.execute({ sessionId: "s", turnId: "t1", instruction: "Take your time" });
    await held.entered;

    expect(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Meanwhile" })).toEqual(
      busy("s"),
    );
    // The running turn sent again is busy too, and says it may be retried.
    expect(
      errorsOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Take your time" })),
    ).toEqual([
      {
        code: "SESSION_BUSY",
        message: "This request is still being answered; retry when it has finished.",
        details: { retryable: true },
      },
    ]);
    // Other sessions are not blocked.
    const elsewhere = await agent.execute({
      sessionId: "other",
      turnId: "t1",
      instruction: "Hi",
      conversationContextId: "stateless",
    });
    expect(responseOf(elsewhere)).toMatchObject({ primaryOutputText: "Elsewhere." });

    held.release();
    expect(responseOf(await running)).toMatchObject({
      kind: "final",
      turnId: "t1",
      primaryOutputText: "First.",
    });
    // The busy request left nothing behind: the session has the one turn, and the retry runs normally.
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns.map((turn) => turn.turnId)).toEqual(
      ["t1"],
    );
    const retried = responseOf(
      await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Meanwhile" }),
    );
    expect(retried).toMatchObject({ kind: "final", turnId: "t2", primaryOutputText: "Second." });
    expect(agent.provider.requests[1]?.continuation).toEqual({
      type: "previous_response",
      responseId: "resp_1",
    });
  });

  it("answers SESSION_BUSY to a continuation that arrives while its turn's round still runs", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "read_file", arguments: { path: "a" }, callId: "c1" }] },
      { text: "Done." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read" }));
    const continuation = {
      sessionId: "s",
      turnId: "t1",
      toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: '"x"' }],
    };
    const held = agent.provider.holdNextCall();
    const running = agent.execute(continuation);
    await held.entered;
    expect(errorsOf(await agent.execute(continuation))[0]).toMatchObject({
      code: "SESSION_BUSY",
      details: { retryable: true },
    });
    expect(errorsOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "New" }))[0].code).toBe(
      "SESSION_BUSY",
    );
    held.release();
    expect(responseOf(await running)).toMatchObject({ kind: "final", primaryOutputText: "Done." });
    expect(await agent.execute(continuation)).toEqual(await running);
  });
});

describe("a turn left running by a crashed instance", () => {
  it("is failed by the next user turn once its lease has expired, and the zombie cannot write any more", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Hello." },
      { text: "After the crash." },
      { text: "Zombie answer." },
      { text: "Later." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));

    const held = agent.provider.holdNextCall();
    const zombie = agent.execute({ sessionId: "s", turnId: "t2", instruction: "Crash during this" });
    await held.entered;

    agent.clock.advance(DEFAULT_LEASE_MS - 1);
    expect(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Anyone there?" })).toEqual(
      busy("s"),
    );
    agent.clock.advance(1);
    const next = responseOf(
      await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Anyone there?" }),
    );
    expect(next).toMatchObject({ kind: "final", primaryOutputText: "After the crash." });
    // t3 continues from before the crashed turn.
    const [, afterCrash] = agent.provider.requests;
    expect(afterCrash?.continuation).toEqual({ type: "previous_response", responseId: "resp_1" });
    expect(afterCrash?.input).toEqual([
      {
        type: "user_message",
        content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nAnyone there?" }],
      },
    ]);

    const session = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(session.turns.map((turn) => [turn.turnId, turn.status])).toEqual([
      ["t1", "completed"],
      ["t2", "failed"],
      ["t3", "completed"],
    ]);
    expect(session.turns[1]?.error).toEqual(CRASHED);
    expect(session.turns[1]?.completedAt).toEqual(agent.clock.now());

    // The crashed instance wakes up: its writes are refused and change nothing.
    held.release();
    expect(errorsOf(await zombie)).toEqual([LEASE_LOST]);
    const after = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(after.turns).toEqual(session.turns);
    expect(resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t2")).llmCalls).toEqual([]);
    responseOf(await agent.execute({ sessionId: "s", turnId: "t4", instruction: "Later" }));
    expect(agent.provider.requests[3]?.continuation).toEqual({
      type: "previous_response",
      responseId: "resp_2",
    });
  });

  it("rolls back past calls the crashed turn already recorded, so their unanswered tool calls stay unseen", async () => {
    let entered!: () => void;
    const reached = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let finish!: () => void;
    const stuck = new Promise<void>((resolve) => {
      finish = resolve;
    });
    // A server tool whose instance "crashes" while it runs: it never returns until the test lets it.
    const slow: ServerTool<Record<string, unknown>> = {
      definition: { name: "slow", description: "Takes forever.", parameters: { type: "object" } },
      parseArguments: (args) => ({ ok: true, value: args as Record<string, unknown> }),
      async execute() {
        entered();
        await stuck;
        return { result: "late" };
      },
    };
    const config = {
      ...TEST_CATALOG,
      modes: TEST_CATALOG.modes.map((mode) =>
        mode.id === "general" ? { ...mode, tools: [...mode.tools, "slow"] } : mode,
      ),
    };
    const agent = await createTestAgent({ config, serverTools: [lookupTool as ServerTool, slow] });
    agent.provider.enqueue(
      { text: "Hello." },
      { toolCalls: [{ name: "slow", arguments: {}, callId: "w1" }] },
      { text: "Recovered." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    const zombie = agent.execute({ sessionId: "s", turnId: "t2", instruction: "Do the slow thing" });
    await reached;
    // The call asking for w1 is recorded: the stored cursor already points past it.
    expect((await agent.store.getSession({ principal: PRINCIPAL, sessionId: "s" }))?.cursor.responseId).toBe(
      "resp_2",
    );

    agent.clock.advance(DEFAULT_LEASE_MS);
    expect(
      responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Anything?" })),
    ).toMatchObject({
      primaryOutputText: "Recovered.",
    });
    expect(agent.provider.requests[2]?.continuation).toEqual({
      type: "previous_response",
      responseId: "resp_1",
    });
    expect(agent.provider.requests[2]?.input).toHaveLength(1);

    finish();
    expect(errorsOf(await zombie)).toEqual([LEASE_LOST]);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns.map((turn) => turn.status)).toEqual(
      ["completed", "failed", "completed"],
    );
  });

  it("is failed after a lease claimed directly through the store expires", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Hello." }, { text: "Recovered." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    const key = { principal: PRINCIPAL, sessionId: "s" };
    const stored = await agent.store.getSession(key);
    if (!stored) throw new Error("session missing");
    const now = agent.clock.now();
    const claimed = await agent.store.claimSession({
      key,
      lease: { owner: "crashed-instance", expiresAt: new Date(now.getTime() + 1_000) },
      now,
    });
    expect(claimed.outcome).toBe("claimed");
    const started = await agent.store.startTurn({
      turn: newTurnRecord(key, "t2", {
        sequence: 2,
        mode: "general",
        startCursor: stored.cursor,
        createdAt: now,
      }),
      sessionPatch: { openTurnId: "t2" },
      leaseOwner: "crashed-instance",
    });
    expect(started).toBe("started");

    expect(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Hello?" })).toEqual(busy("s"));
    agent.clock.advance(1_000);
    expect(
      responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Hello?" })),
    ).toMatchObject({
      primaryOutputText: "Recovered.",
    });
    expect(agent.provider.requests[1]?.continuation).toEqual({
      type: "previous_response",
      responseId: "resp_1",
    });
    const turns = resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns;
    expect(turns.map((turn) => [turn.turnId, turn.status, turn.error])).toEqual([
      ["t1", "completed", null],
      ["t2", "failed", CRASHED],
      ["t3", "completed", null],
    ]);
  });

  it("is failed by failExpiredTurns without waiting for the next turn, leaving other sessions alone", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Idle." },
      { toolCalls: [{ name: "read_file", arguments: { path: "a" }, callId: "c1" }] },
      { text: "Fresh." },
      { text: "Zombie." },
    );
    responseOf(await agent.execute({ sessionId: "idle", turnId: "t1", instruction: "Hi" }));
    responseOf(await agent.execute({ sessionId: "waiting", turnId: "t1", instruction: "Read" }));

    const held = agent.provider.holdNextCall();
    const zombie = agent.execute({ sessionId: "s", turnId: "t1", instruction: "Crash" });
    await held.entered;

    expect(await agent.service.failExpiredTurns()).toBe(0);
    agent.clock.advance(DEFAULT_LEASE_MS);
    expect(await agent.service.failExpiredTurns()).toBe(1);
    expect(await agent.service.failExpiredTurns()).toBe(0);

    const crashed = resultOf(await agent.service.getSession(PRINCIPAL, "s"));
    expect(crashed.turns).toMatchObject([{ turnId: "t1", status: "failed", error: CRASHED }]);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "waiting")).turns[0]?.status).toBe(
      "awaiting_client_tools",
    );
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "idle")).turns[0]?.status).toBe("completed");

    // The crashed turn was the session's first: the next one starts the conversation afresh.
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Again" }));
    expect(agent.provider.requests[2]?.continuation).toEqual({ type: "none" });
    expect(agent.provider.requests[2]?.input[0]).toEqual({
      type: "system_message",
      text: "You are Aptix.\n\nHelp with anything.",
    });

    held.release();
    expect(errorsOf(await zombie)).toEqual([LEASE_LOST]);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns.map((turn) => turn.status)).toEqual(
      ["failed", "completed"],
    );
  });
});
