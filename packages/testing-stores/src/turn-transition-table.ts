import {
  type AgentExecuteRequest,
  type AgentExecuteResponse,
  fail,
  type InvokeResult,
} from "@aptix/contracts";
import {
  AgentCatalog,
  AgentService,
  type SessionKey,
  type SessionStores,
  sha256ContentHashService,
  type TurnRecord,
  type TurnState,
} from "@aptix/core";
import {
  type Admission,
  claimSessionFor,
  interruptedFailure,
  type ManualClock,
  newContinuationResult,
  newCursor,
  newFinalResult,
  newLease,
  newPendingToolCalls,
  newTurnRecord,
  requestHash,
  TurnAdmission,
  TurnPersistence,
} from "@aptix/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionStoresHarness } from "./session-stores-harness.js";

/**
 * The transition table (issue 28): every (session state × turn state × request kind), with the transition
 * `decideTurnRequest` answers and what admission answers once the store applied it. Written once, as data;
 * impossible combinations are listed with why.
 */

/**
 * The session: absent; idle (no open turn, lease free); its open turn awaiting client tools (lease free); its
 * open turn running with the lease held, or with the lease expired (its instance stopped).
 */
type SessionState = "absent" | "idle" | "awaiting" | "running_held" | "running_expired";
/**
 * The turn the request names: none; completed (after a continuation); failed (its continuation mismatched);
 * interrupted (its user round reaped: TURN_INTERRUPTED); awaiting client tools (after one continuation);
 * running (its continuation round unanswered). An awaiting or running turn is its session's open turn.
 */
type NamedTurnState = "none" | "completed" | "failed" | "interrupted" | "awaiting" | "running";
/**
 * The request: a user turn with a new id, or the named turn's id and body, or its id with another body; a
 * continuation answering the calls the turn awaits (or would), one that does not match them, or one the turn
 * already has as a round.
 */
type RequestKind = "user_new" | "user_same" | "user_other" | "cont_match" | "cont_mismatch" | "cont_applied";

export const REQUEST_KINDS: readonly RequestKind[] = [
  "user_new",
  "user_same",
  "user_other",
  "cont_match",
  "cont_mismatch",
  "cont_applied",
];

/**
 * What a combination gets: `decide`, the transition's type (a refusal as `refuse:CODE`); `admit`, what
 * admission answers through a store (`run_round`, `rerun`, `settle_failure`, `stored_answer`, or a failure's
 * code, `SESSION_BUSY+retry` for the retryable "still being answered").
 */
type Expected = { decide: string; admit: string } | { impossible: string };

interface TableRow {
  session: SessionState;
  turn: NamedTurnState;
  expected: Record<RequestKind, Expected>;
}

const to = (decide: string, admit: string): Expected => ({ decide, admit });
const refuse = (code: string): Expected => ({ decide: `refuse:${code}`, admit: code });
const no = (impossible: string): Expected => ({ impossible });
const NEW_ID = no("a new turn id names no turn");
const NO_TURN = no("sent again or applied: the request names a turn");
const NO_CONTINUATION_ROUND = no("the reaped turn's only round is its user turn");
const stored = to("answer", "stored_answer");
const notAwaiting = refuse("TURN_NOT_AWAITING_TOOLS");
const conflict = refuse("TURN_ID_CONFLICT");

/** The rows of a turn that has ended, named by a request (any session state that has it). */
function ended(session: SessionState, turn: "completed" | "failed"): TableRow {
  return {
    session,
    turn,
    expected: {
      user_new: NEW_ID,
      user_same: stored,
      user_other: conflict,
      cont_match: notAwaiting,
      cont_mismatch: notAwaiting,
      cont_applied: stored,
    },
  };
}

function impossible(session: SessionState, turn: NamedTurnState, why: string): TableRow {
  const all = no(why);
  return {
    session,
    turn,
    expected: {
      user_new: all,
      user_same: all,
      user_other: all,
      cont_match: all,
      cont_mismatch: all,
      cont_applied: all,
    },
  };
}

/** A turn reaped while a later turn is open (or the lease is another's): its stored answer, not run again. */
function reapedFollowed(session: SessionState): TableRow {
  return {
    session,
    turn: "interrupted",
    expected: {
      user_new: NEW_ID,
      user_same: stored,
      user_other: conflict,
      cont_match: notAwaiting,
      cont_mismatch: notAwaiting,
      cont_applied: NO_CONTINUATION_ROUND,
    },
  };
}

/** A request naming no turn, in a session that exists. */
function noTurn(session: SessionState, userNew: Expected): TableRow {
  return {
    session,
    turn: "none",
    expected: {
      user_new: userNew,
      user_same: NO_TURN,
      user_other: NO_TURN,
      cont_match: refuse("TURN_NOT_FOUND"),
      cont_mismatch: refuse("TURN_NOT_FOUND"),
      cont_applied: NO_TURN,
    },
  };
}

const NO_SESSION = "a turn belongs to its session";
const OPEN = "an awaiting or running turn is its session's open turn";

export const TURN_TRANSITION_TABLE: readonly TableRow[] = [
  {
    session: "absent",
    turn: "none",
    expected: {
      user_new: to("start_turn", "run_round"),
      user_same: NO_TURN,
      user_other: NO_TURN,
      cont_match: refuse("SESSION_NOT_FOUND"),
      cont_mismatch: refuse("SESSION_NOT_FOUND"),
      cont_applied: NO_TURN,
    },
  },
  impossible("absent", "completed", NO_SESSION),
  impossible("absent", "failed", NO_SESSION),
  impossible("absent", "interrupted", NO_SESSION),
  impossible("absent", "awaiting", NO_SESSION),
  impossible("absent", "running", NO_SESSION),

  noTurn("idle", to("start_turn", "run_round")),
  ended("idle", "completed"),
  ended("idle", "failed"),
  {
    session: "idle",
    turn: "interrupted",
    expected: {
      user_new: NEW_ID,
      // Nothing followed it in the session: reopened and run again.
      user_same: to("rerun_round", "rerun"),
      user_other: conflict,
      cont_match: notAwaiting,
      cont_mismatch: notAwaiting,
      cont_applied: NO_CONTINUATION_ROUND,
    },
  },
  impossible("idle", "awaiting", OPEN),
  impossible("idle", "running", OPEN),

  // The open awaiting turn is abandoned by a new user turn.
  noTurn("awaiting", to("start_turn", "run_round")),
  ended("awaiting", "completed"),
  ended("awaiting", "failed"),
  reapedFollowed("awaiting"),
  {
    session: "awaiting",
    turn: "awaiting",
    expected: {
      user_new: NEW_ID,
      user_same: stored,
      user_other: conflict,
      cont_match: to("resume_turn", "run_round"),
      cont_mismatch: to("fail_round", "settle_failure"),
      cont_applied: stored,
    },
  },
  impossible("awaiting", "running", OPEN),

  noTurn("running_held", to("start_turn", "SESSION_BUSY")),
  ended("running_held", "completed"),
  ended("running_held", "failed"),
  reapedFollowed("running_held"),
  impossible("running_held", "awaiting", OPEN),
  {
    session: "running_held",
    turn: "running",
    expected: {
      user_new: NEW_ID,
      user_same: stored,
      user_other: conflict,
      cont_match: notAwaiting,
      cont_mismatch: notAwaiting,
      cont_applied: to("rerun_round", "SESSION_BUSY+retry"),
    },
  },

  // The open running turn fails with TURN_INTERRUPTED in the new turn's start.
  noTurn("running_expired", to("start_turn", "run_round")),
  ended("running_expired", "completed"),
  ended("running_expired", "failed"),
  reapedFollowed("running_expired"),
  impossible("running_expired", "awaiting", OPEN),
  {
    session: "running_expired",
    turn: "running",
    expected: {
      user_new: NEW_ID,
      user_same: stored,
      user_other: conflict,
      cont_match: notAwaiting,
      cont_mismatch: notAwaiting,
      cont_applied: to("rerun_round", "rerun"),
    },
  },
];

/**
 * What a cancel of the named turn (`POST …/turns/t1/cancel`) answers in each (session state × turn state): the
 * turn's status after it (`cancelled`, or its status unchanged when it has ended), or a failure's code. Every
 * combination the table arranges is listed.
 */
const CANCEL_TABLE: Readonly<Record<string, string>> = {
  "absent/none": "SESSION_NOT_FOUND",
  "idle/none": "TURN_NOT_FOUND",
  "idle/completed": "completed",
  "idle/failed": "failed",
  "idle/interrupted": "failed",
  "awaiting/none": "TURN_NOT_FOUND",
  "awaiting/completed": "completed",
  "awaiting/failed": "failed",
  "awaiting/interrupted": "failed",
  "awaiting/awaiting": "cancelled",
  "running_held/none": "TURN_NOT_FOUND",
  "running_held/completed": "completed",
  "running_held/failed": "failed",
  "running_held/interrupted": "failed",
  // The lease another instance holds is taken: the cancel never waits for the round.
  "running_held/running": "cancelled",
  "running_expired/none": "TURN_NOT_FOUND",
  "running_expired/completed": "completed",
  "running_expired/failed": "failed",
  "running_expired/interrupted": "failed",
  "running_expired/running": "cancelled",
};

/**
 * What a rewind before the named turn (`POST …/rewind { beforeTurnId: "t1" }`) answers in each (session state ×
 * turn state): the turn's status after it, or a failure's code. A session holding an open turn is busy, whatever
 * the turn named.
 */
const REWIND_TABLE: Readonly<Record<string, string>> = {
  "absent/none": "SESSION_NOT_FOUND",
  "idle/none": "TURN_NOT_FOUND",
  "idle/completed": "superseded",
  "idle/failed": "superseded",
  "idle/interrupted": "superseded",
  "awaiting/none": "TURN_NOT_FOUND",
  "awaiting/completed": "SESSION_BUSY",
  "awaiting/failed": "SESSION_BUSY",
  "awaiting/interrupted": "SESSION_BUSY",
  "awaiting/awaiting": "SESSION_BUSY",
  "running_held/none": "TURN_NOT_FOUND",
  "running_held/completed": "SESSION_BUSY",
  "running_held/failed": "SESSION_BUSY",
  "running_held/interrupted": "SESSION_BUSY",
  "running_held/running": "SESSION_BUSY",
  "running_expired/none": "TURN_NOT_FOUND",
  "running_expired/completed": "SESSION_BUSY",
  "running_expired/failed": "SESSION_BUSY",
  "running_expired/interrupted": "SESSION_BUSY",
  "running_expired/running": "SESSION_BUSY",
};

/** The configuration the table's sessions run in. */
export const TABLE_CATALOG = AgentCatalog.create(
  {
    conversationContexts: [
      {
        id: "default",
        bootPrompt: "You are Aptix.",
        model: "gpt-test",
        provider: "scripted",
        defaultMode: "general",
      },
    ],
    modes: [
      {
        id: "general",
        displayName: "General",
        instructions: "Help with anything.",
        welcomeMessage: "Back to general work.",
        tools: [],
        toolChoice: null,
      },
    ],
    clientTools: [],
  },
  [],
);

const NAMED = "t1";
const OPEN_ID = "t-open";
/** How long a held lease lasts: past every test. */
const HELD_MS = 1_000_000_000;
const EXPIRING_MS = 1_000;

/** The request of `kind` for the session `key` (its turn `t1`, or a new id). */
export function requestOf(key: SessionKey, kind: RequestKind): AgentExecuteRequest {
  const { sessionId } = key;
  const results = (toolCallId: string) => [{ toolCallId, executionMs: 1, resultJson: '"ok"' }];
  switch (kind) {
    case "user_new":
      return { sessionId, turnId: "t-new", instruction: "Something new?" };
    case "user_same":
      return { sessionId, turnId: NAMED, instruction: "Question?" };
    case "user_other":
      return { sessionId, turnId: NAMED, instruction: "Another question?" };
    case "cont_match":
      return { sessionId, turnId: NAMED, toolResults: results("call_2") };
    case "cont_mismatch":
      return { sessionId, turnId: NAMED, toolResults: results("call_x") };
    case "cont_applied":
      return { sessionId, turnId: NAMED, toolResults: results("call_1") };
  }
}

/** A round of `request`, with `result` when answered. */
function round(key: SessionKey, kind: RequestKind, result?: InvokeResult<AgentExecuteResponse>) {
  const request = requestOf(key, kind);
  return {
    request,
    requestHash: requestHash(request, sha256ContentHashService),
    ...(result ? { result } : {}),
  };
}

/** The named turn in `state`, as its session stores it. */
function namedTurn(key: SessionKey, state: Exclude<NamedTurnState, "none">, now: Date): TurnRecord {
  const asked = round(key, "user_same", newContinuationResult(key, NAMED));
  const pending = (clientCallId: string) => ({ ...newPendingToolCalls(), clientCallIds: [clientCallId] });
  const base = { sequence: 1, createdAt: now, updatedAt: now, mode: "general" };
  switch (state) {
    case "completed":
      return newTurnRecord(key, NAMED, {
        ...base,
        status: "completed",
        rounds: [asked, round(key, "cont_applied", newFinalResult(key, NAMED))],
        completedAt: now,
      });
    case "failed": {
      const mismatch = fail("TOOL_RESULTS_MISMATCH", "Tool results do not match the turn's tool calls.");
      return newTurnRecord(key, NAMED, {
        ...base,
        status: "failed",
        rounds: [asked, round(key, "cont_applied", mismatch)],
        error: mismatch.errors[0],
        completedAt: now,
      });
    }
    case "interrupted": {
      const reaped = interruptedFailure(NAMED);
      return newTurnRecord(key, NAMED, {
        ...base,
        status: "failed",
        rounds: [round(key, "user_same", reaped)],
        error: reaped.errors[0],
        completedAt: now,
      });
    }
    case "awaiting":
      return newTurnRecord(key, NAMED, {
        ...base,
        status: "awaiting_client_tools",
        rounds: [asked, round(key, "cont_applied", newContinuationResult(key, NAMED))],
        pending: pending("call_2"),
      });
    case "running":
      return newTurnRecord(key, NAMED, {
        ...base,
        rounds: [asked, round(key, "cont_applied")],
        pending: { ...pending("call_1"), continueCursor: newCursor({ responseId: "resp_1" }) },
      });
  }
}

/** The session's open turn when it is not the named one. */
function otherOpenTurn(key: SessionKey, session: SessionState, sequence: number, now: Date): TurnRecord {
  const base = { sequence, createdAt: now, updatedAt: now, mode: "general" };
  const asked = {
    ...round(key, "user_new"),
    request: { sessionId: key.sessionId, turnId: OPEN_ID, instruction: "Open?" },
  };
  return session === "awaiting"
    ? newTurnRecord(key, OPEN_ID, {
        ...base,
        status: "awaiting_client_tools",
        rounds: [{ ...asked, result: newContinuationResult(key, OPEN_ID) }],
        pending: { ...newPendingToolCalls(), clientCallIds: ["call_o"] },
      })
    : newTurnRecord(key, OPEN_ID, { ...base, rounds: [asked] });
}

/** Writes `row`'s session and turns to `store` under `key`, leaving its lease as the row says. */
async function arrange(
  store: SessionStores,
  clock: ManualClock,
  key: SessionKey,
  row: TableRow,
): Promise<void> {
  if (row.session === "absent") return;
  const now = clock.now();
  const named = row.turn === "none" ? undefined : namedTurn(key, row.turn, now);
  const namedOpen = row.turn === "awaiting" || row.turn === "running";
  const other =
    row.session !== "idle" && !namedOpen ? otherOpenTurn(key, row.session, named ? 2 : 1, now) : undefined;
  const leaseMs = row.session === "running_held" ? HELD_MS : EXPIRING_MS;
  const lease = newLease("crashed-instance", leaseMs);
  const create = { conversationContextId: "default", agentContextId: null, mode: "general" };
  const applied = await store.turns.write({ guard: "create", key, lease, now, create });
  if (applied.outcome !== "applied") throw new Error(`arrange: ${applied.outcome}`);
  for (const turn of [named, other]) {
    if (!turn) continue;
    const open = turn.status === "running" || turn.status === "awaiting_client_tools";
    await store.turns.releaseLease(key, lease.owner);
    await claimSessionFor(store, key, lease, now, {
      insertTurn: turn,
      sessionPatch: { openTurnId: open ? turn.turnId : null },
    });
  }
  if (row.session === "idle" || row.session === "awaiting") await store.turns.releaseLease(key, lease.owner);
  if (row.session === "running_expired") clock.advance(EXPIRING_MS);
}

/** Every combination the table lists as possible, with its expectation. */
export function possibleCases(): {
  row: TableRow;
  kind: RequestKind;
  expected: { decide: string; admit: string };
}[] {
  return TURN_TRANSITION_TABLE.flatMap((row) =>
    REQUEST_KINDS.flatMap((kind) => {
      const expected = row.expected[kind];
      return "impossible" in expected ? [] : [{ row, kind, expected }];
    }),
  );
}

/** What admission answered, as the table writes it. */
function admitted(result: InvokeResult<Admission>): string {
  if (!result.successful) {
    const [error] = result.errors;
    return error.code === "SESSION_BUSY" && error.details?.retryable === true
      ? "SESSION_BUSY+retry"
      : error.code;
  }
  const admission = result.result;
  return admission.type === "run_round" && admission.rerun ? "rerun" : admission.type;
}

/**
 * Runs the table through admission against a store: each possible combination is arranged in a session of its
 * own, admitted, and judged by what admission answered. Call it at the top level of a test file, as the other
 * contract suites are.
 */
export function describeTurnTransitionTable(
  name: string,
  makeStore: () => Promise<SessionStoresHarness>,
): void {
  describe(`turn transition table through admission: ${name}`, () => {
    let harness: SessionStoresHarness | undefined;
    let admission: TurnAdmission;
    let service: AgentService;

    beforeAll(async () => {
      harness = await makeStore();
      if (!TABLE_CATALOG.successful) throw new Error(TABLE_CATALOG.errors[0].message);
      let ids = 0;
      const persistence = new TurnPersistence({
        stores: harness.store,
        clock: harness.clock,
        ids: { newId: (prefix) => `${prefix}_${++ids}` },
        leaseMs: 60_000,
      });
      admission = new TurnAdmission({
        catalog: TABLE_CATALOG.result,
        persistence,
        transcripts: harness.store.transcripts,
        clock: harness.clock,
        hashing: sha256ContentHashService,
      });
      service = new AgentService({
        catalog: TABLE_CATALOG.result,
        providers: [],
        store: harness.store,
        files: harness.files,
        clock: harness.clock,
      });
    });

    afterAll(async () => {
      await harness?.close();
    });

    it.each(Object.entries(CANCEL_TABLE).map(([cell, expected], index) => ({ cell, expected, index })))(
      "cancel in $cell: $expected",
      async ({ cell, expected, index }) => {
        const h = harness as SessionStoresHarness;
        const [session, turn] = cell.split("/") as [SessionState, NamedTurnState];
        const row = TURN_TRANSITION_TABLE.find((entry) => entry.session === session && entry.turn === turn);
        if (!row) throw new Error(`no row ${cell}`);
        const key = { principal: "principal-t", sessionId: `cancel-${index}` };
        await arrange(h.store, h.clock, key, row);
        const cancelled = await service.cancelTurn(key.principal, key.sessionId, NAMED);
        expect(cancelled.successful ? cancelled.result.status : cancelled.errors[0].code).toBe(expected);
        if (expected !== "cancelled") return;
        // The session is free at once, its cursor where the turn started; a second cancel changes nothing.
        const state = await h.store.turns.readTurnState(key, NAMED);
        expect(state.session?.openTurnId).toBeNull();
        expect(state.turn).toMatchObject({ status: "cancelled", error: { code: "TURN_CANCELLED" } });
        expect(state.session?.cursor).toStrictEqual(state.turn?.startCursor);
        const again = await service.cancelTurn(key.principal, key.sessionId, NAMED);
        expect(again).toStrictEqual(cancelled);
        expect(admitted(await admission.admit(key, requestOf(key, "user_new")))).toBe("run_round");
      },
    );

    it.each(Object.entries(REWIND_TABLE).map(([cell, expected], index) => ({ cell, expected, index })))(
      "rewind in $cell: $expected",
      async ({ cell, expected, index }) => {
        const h = harness as SessionStoresHarness;
        const [session, turn] = cell.split("/") as [SessionState, NamedTurnState];
        const row = TURN_TRANSITION_TABLE.find((entry) => entry.session === session && entry.turn === turn);
        if (!row) throw new Error(`no row ${cell}`);
        const key = { principal: "principal-t", sessionId: `rewind-${index}` };
        await arrange(h.store, h.clock, key, row);
        const before = await h.store.turns.readTurnState(key, NAMED);
        const rewound = await service.rewindSession(key.principal, key.sessionId, NAMED);
        const named = rewound.successful ? rewound.result.turns.find((t) => t.turnId === NAMED) : undefined;
        expect(rewound.successful ? named?.status : rewound.errors[0].code).toBe(expected);
        const after = await h.store.turns.readTurnState(key, NAMED);
        if (expected !== "superseded") {
          expect(after).toStrictEqual(before);
          return;
        }
        // The cursor is where the turn began; a rewind sent again changes nothing; the session takes a new turn.
        expect(after.session?.cursor).toStrictEqual(after.turn?.startCursor);
        expect(after.session?.openTurnId).toBeNull();
        const again = await service.rewindSession(key.principal, key.sessionId, NAMED);
        expect(again).toStrictEqual(rewound);
        expect(await h.store.turns.readTurnState(key, NAMED)).toStrictEqual(after);
        expect(admitted(await admission.admit(key, requestOf(key, "user_new")))).toBe("run_round");
      },
    );

    it("forks a session in one step: the turns before the named one and the transcript, nothing when stale", async () => {
      const h = harness as SessionStoresHarness;
      const row = TURN_TRANSITION_TABLE.find(
        (entry) => entry.session === "idle" && entry.turn === "completed",
      );
      if (!row) throw new Error("no row idle/completed");
      const key = { principal: "principal-t", sessionId: "fork-source" };
      await arrange(h.store, h.clock, key, row);
      const source = await h.store.directory.getSession(key);
      if (!source) throw new Error("not arranged");
      const whole = await service.forkSession(key.principal, key.sessionId, { newSessionId: "fork-whole" });
      expect(whole.successful && whole.result).toMatchObject({
        sessionId: "fork-whole",
        forkedFrom: { sessionId: key.sessionId },
        turns: [{ turnId: NAMED, status: "completed" }],
      });
      const forkKey = { principal: key.principal, sessionId: "fork-whole" };
      const forked = await h.store.directory.getSession(forkKey);
      expect(forked).toMatchObject({ openTurnId: null, turnCount: 1, version: 1 });
      expect(forked?.cursor).toStrictEqual({ ...source.cursor, responseId: null });
      const length = source.cursor.transcriptLength;
      expect(await h.store.transcripts.loadTranscript(forkKey, length)).toStrictEqual(
        await h.store.transcripts.loadTranscript(key, length),
      );
      // Sent again: the same view; at the turn: none of its turns, in the mode the turn had.
      expect(
        await service.forkSession(key.principal, key.sessionId, { newSessionId: "fork-whole" }),
      ).toStrictEqual(whole);
      const at = await service.forkSession(key.principal, key.sessionId, {
        newSessionId: "fork-at",
        atTurnId: NAMED,
      });
      expect(at.successful && at.result).toMatchObject({
        turns: [],
        forkedFrom: { sessionId: key.sessionId, turnId: NAMED },
      });
      // A stale source version writes nothing.
      const stale = await h.store.directory.forkSession({
        source: key,
        expectVersion: source.version + 1,
        sessionId: "fork-stale",
        beforeSequence: 2,
        mode: source.mode,
        cursor: source.cursor,
        forkedFrom: { sessionId: key.sessionId, turnId: null },
        now: h.clock.now(),
      });
      expect(stale).toBe("stale");
      expect(await h.store.directory.getSession({ ...key, sessionId: "fork-stale" })).toBeUndefined();
      expect(await h.store.directory.listTurns({ ...key, sessionId: "fork-stale" })).toEqual([]);
      // Deleting the source leaves the fork whole.
      expect((await service.deleteSession(key.principal, key.sessionId)).successful).toBe(true);
      expect((await service.getSession(key.principal, "fork-whole")).successful).toBe(true);
      expect(await h.store.directory.listTurns(forkKey)).toHaveLength(1);
    });

    it.each(possibleCases().map((entry, index) => ({ ...entry, index })))(
      "session $row.session, turn $row.turn, request $kind: $expected.admit",
      async ({ row, kind, expected, index }) => {
        const h = harness as SessionStoresHarness;
        const key = { principal: "principal-t", sessionId: `table-${index}` };
        await arrange(h.store, h.clock, key, row);
        expect(admitted(await admission.admit(key, requestOf(key, kind)))).toBe(expected.admit);
      },
    );
  });
}

/** The state `decideTurnRequest` is given for a combination: arranged in `store`, read back. */
export async function arrangedState(
  store: SessionStores,
  clock: ManualClock,
  key: SessionKey,
  row: TableRow,
  kind: RequestKind,
): Promise<TurnState> {
  await arrange(store, clock, key, row);
  return store.turns.readTurnState(key, requestOf(key, kind).turnId);
}
