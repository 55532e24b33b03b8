import { describe, expect, it } from "vitest";
import { InMemorySessionStore, type TranscriptItem } from "../../src/index.js";
import { TurnPersistence } from "../../src/persistence/turn-persistence.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { newCallRecord, newCursor, newTurnRecord } from "../../src/testing/store-fixtures.js";

const key = { principal: "alice", sessionId: "s1" };
const LEASE_MS = 60_000;
const LEASE_LOST =
  "This server instance lost the session's lease while the turn ran; another request took the session over.";

async function setup() {
  const clock = new ManualClock();
  const store = new InMemorySessionStore(clock);
  let ids = 0;
  const persistence = new TurnPersistence({
    store,
    clock,
    ids: { newId: (prefix) => `${prefix}_${++ids}` },
    leaseMs: LEASE_MS,
  });
  const claimed = await persistence.claim(key, {
    conversationContextId: "default",
    agentContextId: null,
    mode: "general",
  });
  if (!claimed.successful) throw new Error(claimed.errors[0].message);
  return { clock, store, persistence, ...claimed.result };
}

const text = (value: string): TranscriptItem => ({ type: "assistant_message", text: value });

describe("TurnPersistence (layer 5)", () => {
  it("answers a turn id the session already has with TURN_ID_CONFLICT", async () => {
    const { lease } = await setup();
    const turn = newTurnRecord(key, "t1", { mode: "general" });
    expect((await lease.startTurn(turn, { openTurnId: "t1" })).successful).toBe(true);
    expect(await lease.startTurn(turn, { openTurnId: "t1" })).toMatchObject({
      successful: false,
      errors: [{ code: "TURN_ID_CONFLICT", details: { turnId: "t1" } }],
    });
  });

  it("refuses every write of a lease another instance took over, with the lease-lost error", async () => {
    const { clock, persistence, lease } = await setup();
    const turn = newTurnRecord(key, "t1", { mode: "general" });
    expect((await lease.startTurn(turn, { openTurnId: "t1" })).successful).toBe(true);
    clock.advance(LEASE_MS + 1);
    const takeover = await persistence.claim(key);
    expect(takeover.successful).toBe(true);

    const lost = {
      successful: false,
      errors: [{ code: "TURN_INTERRUPTED", message: LEASE_LOST, details: { retryable: true } }],
    };
    expect(await lease.updateTurn("t1", { status: "completed" })).toMatchObject(lost);
    expect(await lease.recordLlmCall(newCallRecord(key, "t1", 0))).toMatchObject(lost);
    expect(await lease.startTurn(newTurnRecord(key, "t2"), { openTurnId: "t2" })).toMatchObject(lost);
    expect((await persistence.getTurn(key, "t1"))?.status).toBe("running");
  });

  it("cuts the transcript at fromPosition when it records a call, and advances the cursor", async () => {
    const { store, persistence, lease } = await setup();
    expect((await lease.startTurn(newTurnRecord(key, "t1"), { openTurnId: "t1" })).successful).toBe(true);
    const first = newCursor({ responseId: "resp_1", transcriptLength: 2 });
    expect(
      (
        await lease.recordLlmCall(newCallRecord(key, "t1", 0), {
          items: [text("a"), text("b")],
          fromPosition: 0,
          cursor: first,
        })
      ).successful,
    ).toBe(true);
    expect(await lease.loadTranscript(2)).toEqual([text("a"), text("b")]);
    expect((await persistence.getSession(key))?.cursor).toEqual(first);

    // A call that continues from position 1 (the turn rolled back past "b") replaces what followed it.
    const second = newCursor({ responseId: "resp_2", transcriptLength: 3 });
    expect(
      (
        await lease.recordLlmCall(newCallRecord(key, "t1", 1), {
          items: [text("c"), text("d")],
          fromPosition: 1,
          cursor: second,
        })
      ).successful,
    ).toBe(true);
    expect(await store.loadTranscript(key, 10)).toEqual([text("a"), text("c"), text("d")]);
    expect((await persistence.getSession(key))?.cursor).toEqual(second);
    expect((await persistence.listLlmCalls(key, "t1")).map((call) => call.index)).toEqual([0, 1]);
  });
});
