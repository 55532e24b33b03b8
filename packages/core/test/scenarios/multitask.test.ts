import { type UserTurnRequest, validateAgentExecuteRequest } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import {
  collect,
  createTestAgent,
  errorsOf,
  PRINCIPAL,
  resultOf,
  type TestAgent,
} from "../support/test-agent.js";

/**
 * A user turn sent while its session's turn runs: refused (the default), queued behind it in order, or
 * interrupting it; and a turn run in the background, read back by its id.
 */
function userTurn(turnId: string, more: Partial<UserTurnRequest> = {}): UserTurnRequest {
  const valid = validateAgentExecuteRequest({
    sessionId: "s",
    turnId,
    instruction: `say ${turnId}`,
    ...more,
  });
  if (!valid.successful) throw new Error(valid.errors[0].message);
  return valid.result as UserTurnRequest;
}

const statuses = async (agent: TestAgent) =>
  resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns.map(({ turnId, status }) => [
    turnId,
    status,
  ]);

/** Starts turn t1 and holds its LLM call: the session has a running turn until `release`. */
async function runningFirst(agent: TestAgent) {
  const held = agent.provider.holdNextCall();
  const first = agent.execute(userTurn("t1"));
  await held.entered;
  return { first, release: held.release };
}

/** The instruction each LLM call answered, in order. */
const answered = (agent: TestAgent) =>
  agent.provider.requests.map((request) => JSON.stringify(request.input).match(/say (t\d+)/)?.[1]);

describe("double texting", () => {
  it("refuses a second turn while one runs by default, and with reject", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "one" });
    const { first, release } = await runningFirst(agent);
    expect(errorsOf(await agent.execute(userTurn("t2")))[0]?.code).toBe("SESSION_BUSY");
    expect(errorsOf(await agent.execute(userTurn("t3", { multitask: "reject" })))[0]?.code).toBe(
      "SESSION_BUSY",
    );
    release();
    expect(resultOf(await first)).toMatchObject({ primaryOutputText: "one" });
    expect(await statuses(agent)).toEqual([["t1", "completed"]]);
  });

  it("queues turns behind the running one and runs them in order, each once, each request answered", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "one" }, { text: "two" }, { text: "three" });
    const { first, release } = await runningFirst(agent);
    const second = agent.execute(userTurn("t2", { multitask: "enqueue" }));
    // Sent once t2 is queued: two requests in flight at once are queued in whichever order they are admitted.
    await expect
      .poll(() => statuses(agent))
      .toEqual([
        ["t1", "running"],
        ["t2", "queued"],
      ]);
    const third = agent.execute(userTurn("t3", { multitask: "enqueue" }));
    await expect
      .poll(() => statuses(agent))
      .toEqual([
        ["t1", "running"],
        ["t2", "queued"],
        ["t3", "queued"],
      ]);
    // Queued turns go first: a turn that does not ask to wait is refused, not run ahead of them.
    expect(errorsOf(await agent.execute(userTurn("t4")))[0]?.code).toBe("SESSION_BUSY");
    release();
    expect(resultOf(await first)).toMatchObject({ primaryOutputText: "one" });
    expect(resultOf(await second)).toMatchObject({ turnId: "t2", primaryOutputText: "two" });
    expect(resultOf(await third)).toMatchObject({ turnId: "t3", primaryOutputText: "three" });
    expect(answered(agent)).toEqual(["t1", "t2", "t3"]);
    expect(await statuses(agent)).toEqual([
      ["t1", "completed"],
      ["t2", "completed"],
      ["t3", "completed"],
    ]);
    // Each turn continues the conversation of the one before it.
    expect(JSON.stringify(agent.provider.requests[2]?.input)).not.toContain("say t1");
    expect(agent.provider.requests[2]?.continuation.type).toBe("previous_response");
  });

  it("keeps at most 8 turns queued, refusing the 9th RATE_LIMITED, and never runs a cancelled one", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(...Array.from({ length: 9 }, (_, at) => ({ text: `answer ${at}` })));
    const { first, release } = await runningFirst(agent);
    const queued = [];
    for (let at = 2; at <= 9; at++) {
      queued.push(agent.execute(userTurn(`t${at}`, { multitask: "enqueue" })));
      await expect.poll(async () => (await statuses(agent)).length).toBe(at);
    }
    const ninth = errorsOf(await agent.execute(userTurn("t10", { multitask: "enqueue" })))[0];
    expect(ninth).toMatchObject({ code: "RATE_LIMITED", details: { limit: "queuedTurns", max: 8 } });
    expect(resultOf(await agent.service.cancelTurn(PRINCIPAL, "s", "t3"))).toMatchObject({
      turnId: "t3",
      status: "cancelled",
    });
    release();
    await first;
    const answers = await Promise.all(queued);
    expect(errorsOf(answers[1] ?? never())[0]?.code).toBe("TURN_CANCELLED");
    expect(answered(agent)).toEqual(["t1", "t2", "t4", "t5", "t6", "t7", "t8", "t9"]);
  });

  it("interrupts the running turn as a cancel does and runs the new one at once", async () => {
    const agent = await createTestAgent();
    // The held call of t1 takes its answer only once released: the second answer is its.
    agent.provider.enqueue({ text: "two" }, { text: "never shown" });
    const { first, release } = await runningFirst(agent);
    const second = await agent.execute(userTurn("t2", { multitask: "interrupt" }));
    expect(resultOf(second)).toMatchObject({ turnId: "t2", primaryOutputText: "two" });
    release();
    expect(errorsOf(await first)[0]?.code).toBe("TURN_CANCELLED");
    expect(await statuses(agent)).toEqual([
      ["t1", "cancelled"],
      ["t2", "completed"],
    ]);
  });

  it("streams a queued turn's events once it runs, ending with its result", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "one" }, { text: "two, streamed" });
    const { first, release } = await runningFirst(agent);
    const streamed = await agent.service.stream(
      userTurn("t2", { multitask: "enqueue", stream: true }),
      PRINCIPAL,
    );
    release();
    await first;
    const events = await collect(resultOf(streamed));
    const text = events.flatMap((event) => (event.event === "output_text.delta" ? [event.data.delta] : []));
    expect(text.join("")).toBe("two, streamed");
    expect(events.at(-1)).toMatchObject({
      id: "0-result",
      event: "result",
      data: { successful: true, result: { turnId: "t2" } },
    });
  });

  it("keeps a rewind off a session with queued turns: it is busy", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "one" }, { text: "two" });
    const { first, release } = await runningFirst(agent);
    const second = agent.execute(userTurn("t2", { multitask: "enqueue" }));
    await expect.poll(async () => (await statuses(agent)).length).toBe(2);
    expect(errorsOf(await agent.service.rewindSession(PRINCIPAL, "s", "t1"))[0]?.code).toBe("SESSION_BUSY");
    release();
    await Promise.all([first, second]);
  });
});

describe("background turns", () => {
  it("answers at once, runs with no client, and reads back as a waiting client got it", async () => {
    const agent = await createTestAgent();
    const held = agent.provider.holdNextCall();
    agent.provider.enqueue({ text: "done" });
    const handled = await agent.service.handle(userTurn("t1", { background: true }), PRINCIPAL);
    expect(handled).toEqual({
      type: "accepted",
      accepted: { sessionId: "s", turnId: "t1", status: "running" },
      replayed: false,
    });
    await held.entered;
    expect(resultOf(await agent.service.getTurnState(PRINCIPAL, "s", "t1"))).toEqual({
      turnId: "t1",
      status: "running",
    });
    // Sent again while it runs: accepted again, nothing run twice.
    const again = await agent.service.handle(userTurn("t1", { background: true }), PRINCIPAL);
    expect(again).toMatchObject({ type: "accepted", accepted: { status: "running" } });
    held.release();
    await expect
      .poll(async () => resultOf(await agent.service.getTurnState(PRINCIPAL, "s", "t1")).status)
      .toBe("completed");
    const view = resultOf(await agent.service.getTurnState(PRINCIPAL, "s", "t1"));
    expect(view.result).toMatchObject({ kind: "final", primaryOutputText: "done" });
    expect(agent.provider.requests).toHaveLength(1);
    // Another principal's ids answer as unknown ones.
    expect(errorsOf(await agent.service.getTurnState("bob", "s", "t1"))[0]?.code).toBe("SESSION_NOT_FOUND");
  });
});

function never(): never {
  throw new Error("missing");
}
