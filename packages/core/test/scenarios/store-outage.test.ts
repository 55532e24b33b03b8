import { describe, expect, it } from "vitest";
import { inMemorySessionStores } from "../../src/in-memory/in-memory-session-stores.js";
import {
  type RecordLlmCallInput,
  type SessionStores,
  StoreUnavailableError,
  type TurnStore,
  type TurnWrite,
  type TurnWriteResult,
} from "../../src/index.js";
import { createTestAgent, errorsOf, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

/**
 * In-memory stores whose next writes of the named kinds fail as an unreachable database's would: `settle` is
 * a running turn's lease-guarded write.
 */
function outageStores(): SessionStores & { failNext(...methods: Array<"recordLlmCall" | "settle">): void } {
  const stores = inMemorySessionStores();
  const failing: string[] = [];
  const outage = (method: string) => {
    const index = failing.indexOf(method);
    if (index === -1) return;
    failing.splice(index, 1);
    throw new StoreUnavailableError("The database cannot be reached: connect ECONNREFUSED");
  };
  const { turns } = stores;
  const failingTurns: TurnStore = {
    getTurn: (key, turnId) => turns.getTurn(key, turnId),
    runningAmong: (keys) => turns.runningAmong(keys),
    readTurnState: (key, turnId) => turns.readTurnState(key, turnId),
    releaseLease: (key, owner) => turns.releaseLease(key, owner),
    changeMode: (entry, owner) => turns.changeMode(entry, owner),
    findExpiredLeases: (input) => turns.findExpiredLeases(input),
    findStartableQueued: (limit) => turns.findStartableQueued(limit),
    async recordLlmCall(input: RecordLlmCallInput): Promise<boolean> {
      outage("recordLlmCall");
      return turns.recordLlmCall(input);
    },
    async write(write: TurnWrite): Promise<TurnWriteResult> {
      if (write.guard === "lease") outage("settle");
      return turns.write(write);
    },
  };
  return { ...stores, turns: failingTurns, failNext: (...methods) => failing.push(...methods) };
}

describe("a database outage while a turn runs", () => {
  it("fails the turn with NOT_READY (retryable), never the session", async () => {
    const store = outageStores();
    const agent = await createTestAgent({ store });
    agent.provider.enqueue({ text: "Hello." }, { text: "Lost." }, { text: "Later." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi" }));

    // A plain turn's call is kept with its settlement: the write that fails is that one.
    store.failNext("settle");
    const request = { sessionId: "s", turnId: "t2", instruction: "Meanwhile" };
    const cutShort = await agent.execute(request);
    expect(errorsOf(cutShort)).toEqual([
      {
        code: "NOT_READY",
        message:
          "The database could not be reached while the turn ran; the turn failed. Send it again as a new turn once the service is ready.",
        details: { turnId: "t2", retryable: true },
      },
    ]);
    expect(resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t2"))).toMatchObject({
      status: "failed",
      error: { code: "NOT_READY" },
    });
    expect(await agent.execute(request)).toEqual(cutShort);
    // The session goes on from before the failed turn.
    const later = await agent.execute({ sessionId: "s", turnId: "t3", instruction: "Later" });
    expect(responseOf(later)).toMatchObject({ primaryOutputText: "Later." });
    expect(agent.provider.requests[2]?.continuation).toEqual({
      type: "previous_response",
      responseId: "resp_1",
    });
  });

  it("answers NOT_READY when even the turn's failure cannot be stored, and runs the round again when sent again", async () => {
    const store = outageStores();
    const agent = await createTestAgent({ store });
    agent.provider.enqueue({ text: "Lost." }, { text: "Run again." });
    store.failNext("settle", "settle");
    const request = { sessionId: "s", turnId: "t1", instruction: "Hi" };
    expect(errorsOf(await agent.execute(request))).toEqual([
      {
        code: "NOT_READY",
        message: "The database cannot be reached; send the request again once the service is ready.",
        details: { retryable: true },
      },
    ]);
    // The turn could not be failed: the same request, once the database is back, runs it again.
    expect(resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1")).status).toBe("running");
    const retried = await agent.execute(request);
    expect(responseOf(retried)).toMatchObject({ kind: "final", primaryOutputText: "Run again." });
    expect(agent.provider.requests).toHaveLength(2);
    expect(await agent.execute(request)).toEqual(retried);
  });
});
