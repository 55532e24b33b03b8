import { type AgentExecuteRequest, httpStatusOf, type TurnEvent } from "@aptix/contracts";
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_LEASE_MS } from "../../src/entry/agent-service.js";
import type { ServerTool } from "../../src/index.js";
import type { ScriptedStep } from "../../src/testing/scripted-llm-provider.js";
import { newTurnRecord, startTurnFor } from "../../src/testing/store-fixtures.js";
import {
  createTestAgent,
  errorsOf,
  lookupTool,
  PRINCIPAL,
  responseOf,
  resultOf,
  TEST_CATALOG,
  type TestAgent,
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
/** The stored failure of a turn whose instance stopped, once another request took its session over. */
const interrupted = (turnId: string) => ({
  code: "TURN_INTERRUPTED",
  message:
    "The server instance running this turn stopped before it finished; the turn failed. Send it again as a new turn.",
  details: { turnId, retryable: true },
});
const CRASHED = interrupted("t2");
const LEASE_LOST = {
  code: "TURN_INTERRUPTED",
  message:
    "This server instance lost the session's lease while the turn ran; another request took the session over.",
  details: { retryable: true },
};
const STILL_ANSWERING = {
  code: "SESSION_BUSY",
  message: "This request is still being answered; retry when it has finished.",
  details: { retryable: true },
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
    const continuation = await awaitingReadFile(agent, { text: "Done." });
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
    expect(
      (await agent.store.directory.getSession({ principal: PRINCIPAL, sessionId: "s" }))?.cursor.responseId,
    ).toBe("resp_2");

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
    const stored = await agent.store.directory.getSession(key);
    if (!stored) throw new Error("session missing");
    const now = agent.clock.now();
    const turn = newTurnRecord(key, "t2", {
      sequence: 2,
      mode: "general",
      startCursor: stored.cursor,
      createdAt: now,
    });
    await startTurnFor(agent.store, turn, { owner: "crashed-instance", durationMs: 1_000 });

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
    expect(crashed.turns).toMatchObject([{ turnId: "t1", status: "failed", error: interrupted("t1") }]);
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

describe("a round sent again after the instance running it stopped", () => {
  it("runs a user turn again once its lease expired: one more provider call, its answer stored and replayed", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Hello." },
      { text: "Run again." },
      { text: "Zombie." },
      { text: "Later." },
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    const request = { sessionId: "s", turnId: "t2", instruction: "Interrupted" };
    const { held, zombie, firstAttempt, retried } = await interruptThenRetry(agent, request);
    expect(responseOf(retried)).toMatchObject({
      kind: "final",
      turnId: "t2",
      primaryOutputText: "Run again.",
    });
    // Exactly one more provider call, sent as the first attempt's was: from the cursor the turn started from.
    expect(agent.provider.requests).toHaveLength(2);
    expect(agent.provider.requests[1]).toEqual(firstAttempt);

    // Later identical retries replay the stored answer without calling the provider.
    expect(await agent.execute(request)).toEqual(retried);
    expect(agent.provider.requests).toHaveLength(2);
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t2"));
    expect(trace).toMatchObject({ status: "completed", error: null });
    expect(trace.rounds.map((round) => round.result)).toEqual([retried]);
    expect(trace.llmCalls.map((call) => call.index)).toEqual([0]);

    // The stopped instance wakes up: its writes are refused, and the stored answer stands.
    held.release();
    expect(errorsOf(await zombie)).toEqual([LEASE_LOST]);
    expect(await agent.execute(request)).toEqual(retried);
    // The conversation goes on from the round that ran again, seen once by the provider.
    responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Later" }));
    expect(agent.provider.requests[3]?.continuation).toEqual({
      type: "previous_response",
      responseId: "resp_2",
    });
    expect(agent.provider.requests[3]?.input).toHaveLength(1);
  });

  it("fails the interrupted turn with TURN_INTERRUPTED (retryable) when a new turn takes the session over", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Hello." }, { text: "The new turn." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));
    const interruptedRequest = { sessionId: "s", turnId: "t2", instruction: "Interrupted" };
    const held = agent.provider.holdNextCall();
    void agent.execute(interruptedRequest);
    await held.entered;

    agent.clock.advance(DEFAULT_LEASE_MS);
    const next = await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Something else" });
    expect(responseOf(next)).toMatchObject({ kind: "final", primaryOutputText: "The new turn." });
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t2"));
    expect(trace).toMatchObject({ status: "failed", error: interrupted("t2") });
    const failure = { successful: false, errors: [interrupted("t2")], warnings: [] };
    expect(trace.rounds.map((round) => round.result)).toEqual([failure]);

    // The interrupted turn sent again answers its stored failure, never INTERNAL, without calling the provider.
    expect(await agent.execute(interruptedRequest)).toEqual(failure);
    expect(httpStatusOf("TURN_INTERRUPTED")).toBe(503);
    expect(agent.provider.requests).toHaveLength(2);
  });

  it("runs an interrupted continuation round again from the cursor it started from", async () => {
    const agent = await createTestAgent();
    const continuation = await awaitingReadFile(agent, { text: "Read it." }, { text: "Zombie." });
    const { held, zombie, firstAttempt, retried } = await interruptThenRetry(agent, continuation);
    expect(responseOf(retried)).toMatchObject({ kind: "final", turnId: "t1", primaryOutputText: "Read it." });
    // The provider got the tool output once, continuing from the call that asked for it.
    expect(agent.provider.requests).toHaveLength(2);
    expect(agent.provider.requests[1]).toEqual(firstAttempt);
    expect(agent.provider.requests[1]?.continuation).toEqual({
      type: "previous_response",
      responseId: "resp_1",
    });

    expect(await agent.execute(continuation)).toEqual(retried);
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1"));
    expect(trace.status).toBe("completed");
    expect(trace.rounds.map((round) => round.result?.successful)).toEqual([true, true]);
    expect(trace.llmCalls.map((call) => call.index)).toEqual([0, 1]);

    held.release();
    expect(errorsOf(await zombie)).toEqual([LEASE_LOST]);
    expect(await agent.execute(continuation)).toEqual(retried);
  });

  it("runs a round the reaper already failed again when its client sends it, while nothing followed it", async () => {
    const agent = await createTestAgent();
    // A held call takes its answer once released: the run again answers first.
    agent.provider.enqueue({ text: "Run again." }, { text: "Zombie." });
    const request = { sessionId: "s", turnId: "t1", instruction: "Interrupted" };
    const { held, zombie, firstAttempt, retried } = await interruptThenRetry(agent, request, {
      reaped: true,
    });
    expect(responseOf(retried)).toMatchObject({ kind: "final", primaryOutputText: "Run again." });
    expect(agent.provider.requests).toEqual([firstAttempt]);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns).toMatchObject([
      { turnId: "t1", status: "completed", error: null },
    ]);
    expect(await agent.execute(request)).toEqual(retried);
    held.release();
    expect(errorsOf(await zombie)).toEqual([LEASE_LOST]);
    expect(await agent.execute(request)).toEqual(retried);
    expect(agent.provider.requests).toHaveLength(2);
  });

  it("runs a continuation round the reaper failed again from the cursor kept with its pending calls", async () => {
    const agent = await createTestAgent();
    const continuation = await awaitingReadFile(agent, { text: "Read it." }, { text: "Zombie." });
    const { held, zombie, firstAttempt, retried } = await interruptThenRetry(agent, continuation, {
      reaped: true,
    });
    expect(responseOf(retried)).toMatchObject({ kind: "final", primaryOutputText: "Read it." });
    expect(agent.provider.requests[1]).toEqual(firstAttempt);
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1"));
    expect(trace.rounds.map((round) => round.result?.successful)).toEqual([true, true]);
    // The stopped instance wakes up before the test's store goes away: its writes are refused.
    held.release();
    expect(errorsOf(await zombie)).toEqual([LEASE_LOST]);
  });

  it("answers a reaped turn's failure once the session moved on to a new turn", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "The new turn." }, { text: "Never seen." });
    const request = { sessionId: "s", turnId: "t1", instruction: "Interrupted" };
    const held = agent.provider.holdNextCall();
    const zombie = agent.execute(request);
    await held.entered;
    agent.clock.advance(DEFAULT_LEASE_MS);
    expect(await agent.service.failExpiredTurns()).toBe(1);
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Something else" }));
    expect(errorsOf(await agent.execute(request))).toEqual([interrupted("t1")]);
    expect(agent.provider.requests).toHaveLength(1);
    held.release();
    expect(errorsOf(await zombie)).toEqual([LEASE_LOST]);
  });

  it("numbers a streamed round's events run again after the earlier attempt's, so every event id names one event", async () => {
    let entered!: () => void;
    const reached = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let hung = false;
    // A server tool whose instance stops while it runs: its first run never returns.
    const slow: ServerTool<Record<string, unknown>> = {
      definition: { name: "slow", description: "Takes forever once.", parameters: { type: "object" } },
      parseArguments: (args) => ({ ok: true, value: args as Record<string, unknown> }),
      async execute() {
        if (!hung) {
          hung = true;
          entered();
          await new Promise(() => {});
        }
        return { result: "quick" };
      },
    };
    const config = {
      ...TEST_CATALOG,
      modes: TEST_CATALOG.modes.map((mode) =>
        mode.id === "general" ? { ...mode, tools: [...mode.tools, "slow"] } : mode,
      ),
    };
    const agent = await createTestAgent({
      config,
      serverTools: [lookupTool as ServerTool, slow],
      eventFlushMs: 1,
      followPollMs: 10,
    });
    agent.provider.enqueue(
      { text: "Looking now.", toolCalls: [{ name: "slow", arguments: {}, callId: "w1" }] },
      { text: "Looking again.", toolCalls: [{ name: "slow", arguments: {}, callId: "w2" }] },
      { text: "Found it." },
    );
    const request = { sessionId: "s", turnId: "t1", instruction: "Look", stream: true };
    void agent.service.execute(request, PRINCIPAL, { onEvent: () => {} });
    await reached;
    await vi.waitFor(async () => expect(await storedEventIds(agent, "t1")).toEqual(["0-0", "0-1"]));

    agent.clock.advance(DEFAULT_LEASE_MS);
    const again: TurnEvent[] = [];
    const result = await agent.service.execute(request, PRINCIPAL, { onEvent: (event) => again.push(event) });
    expect(responseOf(result)).toMatchObject({ primaryOutputText: "Found it." });
    // The run again opens with a reset: what the earlier attempt streamed is not the answer.
    expect(again.map((event) => [event.id, event.event])).toEqual([
      ["0-2", "output_text.reset"],
      ["0-3", "output_text.delta"],
      ["0-4", "output_text.delta"],
      ["0-5", "output_text.reset"],
      ["0-6", "output_text.delta"],
      ["0-7", "output_text.delta"],
      ["0-result", "result"],
    ]);
    // A follower from the start sees both attempts' events once each, then the one result.
    const followed = await storedEventIds(agent, "t1");
    expect(followed).toEqual(["0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6", "0-7", "0-result"]);
  });

  it("is failed by failExpiredTurns only once its lease has been expired for expiredForMs, leaving the client that long to send it again", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Ran again." });
    const waiting = { sessionId: "waiting", turnId: "t1", instruction: "Interrupted" };
    const held = agent.provider.holdNextCall();
    void agent.execute(waiting);
    await held.entered;
    const heldToo = agent.provider.holdNextCall();
    void agent.execute({ sessionId: "gone", turnId: "t1", instruction: "Interrupted too" });
    await heldToo.entered;

    agent.clock.advance(DEFAULT_LEASE_MS);
    expect(await agent.service.failExpiredTurns({ expiredForMs: 1_000 })).toBe(0);
    // The client of one session sends its round again in time: it runs again, and the reaper leaves it be.
    expect(responseOf(await agent.execute(waiting))).toMatchObject({ primaryOutputText: "Ran again." });
    agent.clock.advance(999);
    expect(await agent.service.failExpiredTurns({ expiredForMs: 1_000 })).toBe(0);
    agent.clock.advance(1);
    expect(await agent.service.failExpiredTurns({ expiredForMs: 1_000 })).toBe(1);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "gone")).turns).toMatchObject([
      { status: "failed", error: interrupted("t1") },
    ]);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "waiting")).turns).toMatchObject([
      { status: "completed", error: null },
    ]);
  });
});

/**
 * Sends `request` and holds its provider call, as an instance that stops mid-call would; then sends it again:
 * still being answered (SESSION_BUSY, retryable) until the lease expires, then run again.
 */
/** Sends `request`, stops its instance mid-call, and sends it again once the lease expired (and, with `reaped`, after the reaper failed it). */
async function interruptThenRetry(
  agent: TestAgent,
  request: AgentExecuteRequest,
  options = { reaped: false },
) {
  const held = agent.provider.holdNextCall();
  const zombie = agent.execute(request);
  const firstAttempt = await held.entered;
  agent.clock.advance(DEFAULT_LEASE_MS - 1);
  expect(errorsOf(await agent.execute(request))).toEqual([STILL_ANSWERING]);
  agent.clock.advance(1);
  if (options.reaped) {
    expect(await agent.service.failExpiredTurns()).toBe(1);
    const turn = resultOf(await agent.service.getTurnTrace(PRINCIPAL, request.sessionId, request.turnId));
    expect(turn).toMatchObject({ status: "failed", error: interrupted(request.turnId) });
  }
  const retried = await agent.execute(request);
  return { held, zombie, firstAttempt, retried };
}

/** Turn t1 of session s, paused for the client to read a file: answers the continuation that gives it. */
async function awaitingReadFile(agent: TestAgent, ...then: ScriptedStep[]) {
  agent.provider.enqueue(
    { toolCalls: [{ name: "read_file", arguments: { path: "a" }, callId: "c1" }] },
    ...then,
  );
  responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Read" }));
  return {
    sessionId: "s",
    turnId: "t1",
    toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: '"x"' }],
  };
}

/** The ids of the events a follower of `turnId` gets now, without waiting for more. */
async function storedEventIds(agent: TestAgent, turnId: string): Promise<string[]> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), 50);
  const ids: string[] = [];
  const follower = resultOf(await agent.service.followTurn(PRINCIPAL, "s", turnId, undefined, stop.signal));
  for await (const event of follower) ids.push(event.id);
  clearTimeout(timer);
  return ids;
}
