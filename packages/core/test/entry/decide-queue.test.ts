import { type UserTurnRequest, validateAgentExecuteRequest } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { AgentCatalog } from "../../src/catalog/agent-catalog.js";
import { decideDequeue, decideTurnRequest } from "../../src/entry/decide-turn.js";
import type { TurnState } from "../../src/ports/turn-store.js";
import type { SessionRecord } from "../../src/records/session-record.js";
import type { TurnRecord } from "../../src/records/turn-record.js";
import { FIXTURE_TIME, newCursor, newTurnRecord } from "../../src/testing/store-fixtures.js";
import { lookupTool, TEST_CATALOG } from "../support/test-agent.js";

/** The decisions of a user turn sent while its session's turn runs, and of a queued turn's start: pure. */
const key = { principal: "alice", sessionId: "s1" };
const now = new Date("2026-01-01T00:00:00Z");
const created = AgentCatalog.create(TEST_CATALOG, [lookupTool]);
if (!created.successful) throw new Error(created.errors[0].message);
const catalog = created.result;

const session = (overrides: Partial<SessionRecord> = {}): SessionRecord => ({
  ...key,
  conversationContextId: "default",
  agentContextId: null,
  mode: "general",
  solutionContextText: "kept",
  cursor: newCursor({ responseId: "resp-1", transcriptLength: 4 }),
  openTurnId: "t1",
  turnCount: 1,
  version: 7,
  createdAt: FIXTURE_TIME,
  updatedAt: FIXTURE_TIME,
  ...overrides,
});
const running = newTurnRecord(key, "t1", { sequence: 1, status: "running" });

function request(turnId: string, more: Partial<UserTurnRequest> = {}): UserTurnRequest {
  const valid = validateAgentExecuteRequest({ sessionId: "s1", turnId, instruction: "next", ...more });
  if (!valid.successful) throw new Error(valid.errors[0].message);
  return valid.result as UserTurnRequest;
}

const decide = (state: TurnState, sent: UserTurnRequest, hash = "sha256:sent") =>
  decideTurnRequest({ key, state, request: sent, hash, catalog, now });

function queuedTurn(turnId: string, sequence: number, sent = request(turnId)): TurnRecord {
  return newTurnRecord(key, turnId, {
    sequence,
    status: "queued",
    rounds: [{ request: sent, requestHash: `sha256:${turnId}` }],
  });
}

describe("a user turn sent while its session's turn runs", () => {
  it("enqueue: stores it queued after the session's turns, with its request as its first round", () => {
    const decision = decide(
      { session: session(), openTurn: running },
      request("t2", { multitask: "enqueue" }),
    );
    expect(decision).toMatchObject({
      type: "enqueue_turn",
      turn: { turnId: "t2", status: "queued", sequence: 2, rounds: [{ requestHash: "sha256:sent" }] },
    });
  });

  it("enqueue behind queued turns alone, and refused RATE_LIMITED once 8 wait", () => {
    const idle = session({ openTurnId: null, turnCount: 9 });
    const sent = request("t10", { multitask: "enqueue" });
    expect(decide({ session: idle, queued: { count: 7, next: queuedTurn("t2", 2) } }, sent)).toMatchObject({
      type: "enqueue_turn",
      turn: { sequence: 10 },
    });
    expect(decide({ session: idle, queued: { count: 8, next: queuedTurn("t2", 2) } }, sent)).toMatchObject({
      type: "refuse",
      failure: { errors: [{ code: "RATE_LIMITED", details: { limit: "queuedTurns", max: 8 } }] },
    });
  });

  it("enqueue on an idle session with nothing queued starts at once", () => {
    const idle = session({ openTurnId: null });
    expect(decide({ session: idle }, request("t2", { multitask: "enqueue" })).type).toBe("start_turn");
  });

  it("reject (and no multitask) is refused busy while turns are queued; interrupt starts before them", () => {
    const state = { session: session({ openTurnId: null }), queued: { count: 1, next: queuedTurn("t2", 2) } };
    for (const sent of [request("t3"), request("t3", { multitask: "reject" })]) {
      expect(decide(state, sent)).toMatchObject({
        type: "refuse",
        failure: { errors: [{ code: "SESSION_BUSY" }] },
      });
    }
    expect(decide(state, request("t3", { multitask: "interrupt" })).type).toBe("start_turn");
  });

  it("a queued turn sent again is followed, not run again; a different body is TURN_ID_CONFLICT", () => {
    const queued = queuedTurn("t2", 2);
    const state = { session: session({ turnCount: 2 }), turn: queued, openTurn: running };
    expect(decide(state, request("t2"), "sha256:t2")).toEqual({ type: "follow", turn: queued });
    expect(decide(state, request("t2"), "sha256:other")).toMatchObject({
      failure: { errors: [{ code: "TURN_ID_CONFLICT" }] },
    });
  });

  it("a background turn sent again while another instance answers it is followed, others refused busy", () => {
    const answered = newTurnRecord(key, "t1", {
      sequence: 1,
      status: "completed",
      rounds: [{ request: request("t1"), requestHash: "sha256:t1" }],
    });
    // Ended without its answer stored (not the session's open turn any more): nothing runs it again.
    const state = { session: session({ openTurnId: null }), turn: answered };
    expect(decide(state, request("t1", { background: true }), "sha256:t1")).toEqual({
      type: "follow",
      turn: answered,
    });
    expect(decide(state, request("t1"), "sha256:t1")).toMatchObject({
      failure: { errors: [{ code: "SESSION_BUSY" }] },
    });
  });
});

describe("a queued turn's start", () => {
  it("starts the first queued turn from the session's cursor and mode as they are now, latching its context", () => {
    const next = queuedTurn("t2", 2, request("t2", { solutionContextText: "new context" }));
    const idle = session({ openTurnId: null, turnCount: 3 });
    const dequeue = decideDequeue({ session: idle, queued: { count: 2, next } }, catalog, now);
    expect(dequeue).toMatchObject({
      type: "dequeue_turn",
      patch: { status: "running", startCursor: idle.cursor, mode: "general" },
      sessionPatch: {
        openTurnId: "t2",
        cursor: idle.cursor,
        mode: "general",
        solutionContextText: "new context",
      },
      turn: { turnId: "t2", status: "running", startCursor: idle.cursor },
      warnings: [],
    });
    expect(dequeue?.modeChange).toBeUndefined();
  });

  it("resets a mode no longer configured, with its history row and warning", () => {
    const next = queuedTurn("t2", 2);
    const idle = session({ openTurnId: null, mode: "gone" });
    const dequeue = decideDequeue({ session: idle, queued: { count: 1, next } }, catalog, now);
    expect(dequeue).toMatchObject({
      patch: { mode: "general" },
      modeChange: { previousMode: "gone", newMode: "general", turnId: "t2" },
      warnings: [{ code: "MODE_RESET" }],
    });
  });

  it("waits while the session holds an open turn, and does nothing without a queue", () => {
    const next = queuedTurn("t2", 2);
    expect(decideDequeue({ session: session(), queued: { count: 1, next } }, catalog, now)).toBeUndefined();
    expect(decideDequeue({ session: session({ openTurnId: null }) }, catalog, now)).toBeUndefined();
    expect(decideDequeue({}, catalog, now)).toBeUndefined();
  });
});
