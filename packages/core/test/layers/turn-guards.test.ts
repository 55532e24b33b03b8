import { TURN_STATUSES, type TurnStatus } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { AgentCatalog } from "../../src/catalog/agent-catalog.js";
import {
  decideCancel,
  decideDequeue,
  decideReap,
  decideRewind,
  decideTurnRequest,
} from "../../src/entry/decide-turn.js";
import {
  canTake,
  isOpen,
  LIFECYCLE_EVENTS,
  TURN_LIFECYCLE,
  type TurnStatusOrNew,
} from "../../src/lifecycle/turn-lifecycle.js";
import type { TurnState } from "../../src/ports/turn-store.js";
import type { SessionRecord } from "../../src/records/session-record.js";
import {
  FIXTURE_TIME,
  newCursor,
  newPendingToolCalls,
  newTurnRecord,
} from "../../src/testing/store-fixtures.js";
import { lookupTool, TEST_CATALOG } from "../support/test-agent.js";

/**
 * Every guard a decision asks is the lifecycle table's own answer: for each status a turn can be in, each
 * decision lets the turn through exactly when the table has a cell for its event. A guard written beside the
 * table that disagreed with it fails here.
 */
const key = { principal: "alice", sessionId: "s1" };
const now = new Date("2026-01-01T00:00:00Z");
const created = AgentCatalog.create(TEST_CATALOG, [lookupTool]);
if (!created.successful) throw new Error(created.errors[0].message);
const catalog = created.result;
const contextId = catalog.conversationContext(undefined)?.id ?? "";

/** A session whose open turn is `t1`, in `status`, awaiting its client call `call_c` (kept whatever the status). */
function stateWith(status: TurnStatus): Required<Pick<TurnState, "session" | "turn">> {
  const session: SessionRecord = {
    ...key,
    conversationContextId: contextId,
    agentContextId: null,
    mode: catalog.defaultModeOf(catalog.conversationContext(contextId) ?? never()).id,
    solutionContextText: null,
    cursor: newCursor(),
    openTurnId: "t1",
    turnCount: 1,
    version: 3,
    createdAt: FIXTURE_TIME,
    updatedAt: FIXTURE_TIME,
  };
  return { session, turn: newTurnRecord(key, "t1", { status, sequence: 1, pending: newPendingToolCalls() }) };
}

function never(): never {
  throw new Error("the test catalog has no default context");
}

describe("guards derived from the lifecycle table", () => {
  it("canTake answers the table's cell for every status × event, and isOpen its cancel column less the queued", () => {
    const statuses: TurnStatusOrNew[] = ["new", ...TURN_STATUSES];
    for (const status of statuses) {
      for (const event of LIFECYCLE_EVENTS) {
        expect(canTake(status, event), `${status} × ${event}`).toBe(TURN_LIFECYCLE[status][event] !== null);
      }
    }
    for (const status of TURN_STATUSES) {
      expect(isOpen(status), status).toBe(canTake(status, "cancel") && !canTake(status, "dequeue"));
    }
  });

  it.each(TURN_STATUSES)(
    "a %s turn: cancel, reap, continuation, a new user turn and a rewind agree with the table",
    (status) => {
      const { session, turn } = stateWith(status);

      const cancel = decideCancel({ session, turn }, now);
      expect(cancel !== undefined, "cancel").toBe(canTake(status, "cancel"));
      if (cancel) expect(cancel.cancelled.patch.status).toBe(TURN_LIFECYCLE[status].cancel);

      const reap = decideReap({ session, turn }, now);
      expect(reap !== undefined, "reap").toBe(canTake(status, "lease_lost"));
      if (reap) expect(reap.failed.patch.status).toBe(TURN_LIFECYCLE[status].lease_lost);

      const continued = decideTurnRequest({
        key,
        state: { session, turn },
        request: {
          sessionId: key.sessionId,
          turnId: "t1",
          toolResults: [{ toolCallId: "call_c", executionMs: 1, resultJson: "{}" }],
        },
        hash: "sha256:continuation",
        catalog,
        now,
      });
      const letIn = continued.type === "resume_turn" || continued.type === "fail_round";
      expect(letIn, `continuation: ${continued.type}`).toBe(canTake(status, "continuation"));

      const next = decideTurnRequest({
        key,
        state: { session, openTurn: turn },
        request: { sessionId: key.sessionId, turnId: "t2", instruction: "next" },
        hash: "sha256:next",
        catalog,
        now,
      });
      if (next.type !== "start_turn") throw new Error(`a new user turn was not started: ${next.type}`);
      const closedAs = canTake(status, "abandon")
        ? TURN_LIFECYCLE[status].abandon
        : TURN_LIFECYCLE[status].lease_lost;
      expect(next.closeOpenTurn?.patch.status ?? null, "closed by a new user turn").toBe(closedAs);

      // Started from its queue once the session no longer holds a turn open, where the table says so.
      const idle = { ...session, openTurnId: null };
      const dequeue = decideDequeue({ session: idle, queued: { count: 1, next: turn } }, catalog, now);
      expect(dequeue !== undefined, "dequeue").toBe(canTake(status, "dequeue"));
      if (dequeue) expect(dequeue.patch.status).toBe(TURN_LIFECYCLE[status].dequeue);

      // A rewind before the turn, once the session no longer holds it open: superseded where the table says so;
      // a queued turn keeps the session busy.
      const rewind = decideRewind(idle, [turn], turn, now);
      if (canTake(status, "dequeue")) expect(rewind, "rewind").toBe("busy");
      else expect(rewind !== undefined, "rewind").toBe(canTake(status, "rewind"));
      if (rewind && rewind !== "busy") {
        expect(rewind.superseded).toEqual([
          { turnId: "t1", patch: expect.objectContaining({ status: TURN_LIFECYCLE[status].rewind }) },
        ]);
        expect(rewind.sessionPatch.cursor).toStrictEqual(turn.startCursor);
        // In the mode the turn began in: nothing to change.
        const sameMode = decideRewind({ ...idle, mode: turn.mode }, [turn], turn, now);
        expect(sameMode !== "busy" && [sameMode?.sessionPatch.mode, sameMode?.modeChange]).toEqual([
          undefined,
          undefined,
        ]);
        const changedSince = decideRewind({ ...idle, mode: "elsewhere" }, [turn], turn, now);
        expect(changedSince !== "busy" && changedSince).toMatchObject({
          sessionPatch: { cursor: turn.startCursor, mode: turn.mode },
          modeChange: { turnId: "t1", previousMode: "elsewhere", newMode: turn.mode, changedAt: now },
        });
      }
      // While the session holds an open turn, a rewind is busy whatever the turn.
      expect(decideRewind(session, [turn], turn, now)).toBe("busy");
    },
  );
});
