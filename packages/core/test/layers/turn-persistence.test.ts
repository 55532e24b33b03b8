import { describe, expect, it } from "vitest";
import { inMemorySessionStores } from "../../src/in-memory/in-memory-session-stores.js";
import type { TranscriptItem } from "../../src/index.js";
import { TurnPersistence } from "../../src/persistence/turn-persistence.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { newCallRecord, newCursor, newTurnRecord } from "../../src/testing/store-fixtures.js";

const key = { principal: "alice", sessionId: "s1" };
const LEASE_MS = 60_000;
const LEASE_LOST =
  "This server instance lost the session's lease while the turn ran; another request took the session over.";

async function setup(maxRunningTurns?: number) {
  const clock = new ManualClock();
  const store = inMemorySessionStores(clock);
  let ids = 0;
  const persistence = new TurnPersistence({
    stores: store,
    clock,
    ids: { newId: (prefix) => `${prefix}_${++ids}` },
    leaseMs: LEASE_MS,
    ...(maxRunningTurns === undefined ? {} : { maxRunningTurns }),
  });
  const applied = await persistence.apply(
    {
      guard: "create",
      key,
      now: clock.now(),
      create: { conversationContextId: "default", agentContextId: null, mode: "general" },
      insertTurn: newTurnRecord(key, "t1", { mode: "general" }),
      sessionPatch: { openTurnId: "t1" },
    },
    true,
  );
  if (applied.outcome !== "applied") throw new Error(`not applied: ${applied.outcome}`);
  return { clock, store, persistence, lease: applied.lease, session: applied.session };
}

const text = (value: string): TranscriptItem => ({ type: "assistant_message", text: value });

describe("TurnPersistence (layer 5)", () => {
  it("applies a transition with a new lease, or answers why not: busy, stale, RATE_LIMITED at the cap", async () => {
    const { clock, persistence, session } = await setup(1);
    const other = { ...key, sessionId: "s2" };
    const create = { conversationContextId: "default", agentContextId: null, mode: "general" } as const;
    const now = clock.now();
    expect(
      await persistence.apply({ guard: "version", key, now, expectVersion: session.version }, false),
    ).toEqual({
      outcome: "busy",
    });
    expect(await persistence.apply({ guard: "create", key: other, now, create }, true)).toMatchObject({
      outcome: "refused",
      failure: {
        successful: false,
        errors: [
          { code: "RATE_LIMITED", details: { limit: "APTIX_MAX_RUNNING_TURNS", retryAfterSeconds: 1 } },
        ],
      },
    });
    // Without a running turn to start, the cap does not apply.
    const created = await persistence.apply({ guard: "create", key: other, now, create }, false);
    expect(created.outcome).toBe("applied");
    clock.advance(LEASE_MS);
    expect(await persistence.apply({ guard: "create", key: other, now, create }, false)).toEqual({
      outcome: "stale",
    });
  });

  it("refuses every write of a lease another instance took over, with the lease-lost error", async () => {
    const { clock, persistence, lease, session } = await setup();
    clock.advance(LEASE_MS + 1);
    const takeover = await persistence.apply(
      { guard: "version", key, now: clock.now(), expectVersion: session.version },
      false,
    );
    expect(takeover.outcome).toBe("applied");

    const lost = {
      successful: false,
      errors: [{ code: "TURN_INTERRUPTED", message: LEASE_LOST, details: { retryable: true } }],
    };
    expect(await lease.settle("t1", { status: "completed" })).toMatchObject(lost);
    expect(await lease.recordLlmCall(newCallRecord(key, "t1", 0))).toMatchObject(lost);
    expect((await persistence.getTurn(key, "t1"))?.status).toBe("running");
  });

  it("cuts the transcript at fromPosition when it records a call, and advances the cursor", async () => {
    const { store, persistence, lease } = await setup();
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
    expect(await store.transcripts.loadTranscript(key, 10)).toEqual([text("a"), text("c"), text("d")]);
    expect((await persistence.getSession(key))?.cursor).toEqual(second);
    expect((await store.transcripts.listLlmCalls(key, "t1")).map((call) => call.index)).toEqual([0, 1]);
  });
});
