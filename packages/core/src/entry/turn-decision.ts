import type {
  AgentExecuteResponse,
  InvokeFailure,
  InvokeResult,
  InvokeWarning,
  ToolContinuationRequest,
  UserTurnRequest,
} from "@aptix/contracts";
import type { ConversationContext } from "../catalog/conversation-context.js";
import type { RoundOpening } from "../composition/round-opening.js";
import type { UnkeyedChange } from "../persistence/transact.js";
import type { TurnState } from "../ports/turn-store.js";
import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionPatch, SessionRecord } from "../records/session-record.js";
import type { PendingToolCalls, TurnPatch, TurnRecord } from "../records/turn-record.js";

/**
 * Which failure answers a decision whose session's lease another owner holds: SESSION_BUSY (another turn
 * runs), or the retryable "still being answered" of a round sent again while its own instance runs it.
 */
type BusyAnswer = "session_busy" | "still_answering";

/** A turn's patch, by id. */
export interface TurnWrite {
  turnId: string;
  patch: TurnPatch;
}

/** A user turn's start: its running turn, and what its session changes with it. */
export interface StartTurn {
  type: "start_turn";
  busy: "session_busy";
  /** The session to create first, when it does not exist. */
  create?: Pick<SessionRecord, "conversationContextId" | "agentContextId" | "mode">;
  turn: TurnRecord;
  sessionPatch: SessionPatch;
  /**
   * The session's open turn, closed with the start: abandoned when it awaits client tools (the user moved on),
   * failed with TURN_INTERRUPTED when an instance whose lease expired left it running.
   */
  closeOpenTurn?: TurnWrite;
  /** The session's mode, no longer configured, reset to its context's default (AGN-011 §5.7). */
  modeChange?: ModeHistoryEntry;
  context: ConversationContext;
  request: UserTurnRequest;
  warnings: InvokeWarning[];
}

/**
 * A user turn sent while its session's turn runs, with `multitask: "enqueue"`: kept `queued` behind the turns
 * before it, its request stored with it so any instance can start it once they end (`DequeueTurn`).
 */
interface EnqueueTurn {
  type: "enqueue_turn";
  turn: TurnRecord;
}

/**
 * The session's first queued turn, started once the turns before it ended: running from the session's cursor
 * and in its mode as they are now, as a user turn starts.
 */
export interface DequeueTurn {
  type: "dequeue_turn";
  busy: "session_busy";
  /** The turn as started: `patch` applied. */
  turn: TurnRecord;
  patch: TurnPatch;
  sessionPatch: SessionPatch;
  modeChange?: ModeHistoryEntry;
  context: ConversationContext;
  request: UserTurnRequest;
  warnings: InvokeWarning[];
}

/** A client's cancel of a queued turn: it ends `cancelled` and never runs; the session's running turn goes on. */
export interface CancelQueued {
  type: "cancel_queued";
  cancelled: TurnWrite;
}

/** A continuation whose results match its turn's pending calls: the turn runs again, with them. */
interface ResumeTurn {
  type: "resume_turn";
  busy: "session_busy";
  /** The turn as resumed: `patch` applied. */
  turn: TurnRecord;
  patch: TurnPatch;
  context: ConversationContext;
  request: ToolContinuationRequest;
  pending: PendingToolCalls;
}

/**
 * A round sent again whose instance stopped before answering it: it runs again from its last durable point
 * (`cursor`). A turn the reaper failed while nothing followed it in the session is reopened first (`reopen`,
 * with the session's open turn set back to it).
 */
interface RerunRound {
  type: "rerun_round";
  busy: "still_answering";
  round: number;
  /** The turn as it runs again: reopened when `reopen` is given. */
  turn: TurnRecord;
  reopen?: TurnPatch;
  context: ConversationContext;
  opening: RoundOpening;
  cursor: ConversationCursor;
  warnings: InvokeWarning[];
}

/**
 * A round that fails before it runs, `failure` stored as its result (the settlement writes it, under the lease):
 * tool results that do not match, a context no longer configured, a round sent again with no restart point.
 */
interface FailRound {
  type: "fail_round";
  busy: BusyAnswer;
  round: number;
  /** The turn as the settlement fails it (with the round among its rounds; reopened when `reopen` is given). */
  turn: TurnRecord;
  reopen?: TurnPatch;
  failure: InvokeFailure;
}

/** The reaper's: a turn left running by a stopped instance fails with TURN_INTERRUPTED, the lease given back. */
export interface FailInterrupted {
  type: "fail_interrupted";
  failed: TurnWrite;
  sessionPatch: SessionPatch;
}

/**
 * A client's cancel of a running or awaiting turn: it ends `cancelled` and the session is free at once. The
 * write takes the lease whoever holds it (the instance running the turn loses it, and so writes nothing more)
 * and gives it back in the same step.
 */
export interface CancelTurn {
  type: "cancel_turn";
  cancelled: TurnWrite;
  sessionPatch: SessionPatch;
}

/**
 * A rewind before a turn: it and every later turn not superseded yet become `superseded`, and the session's
 * cursor and mode go back to where that turn began. Claims the lease (so it is refused while a turn runs) and
 * gives it back in the same step.
 */
export interface RewindSession {
  type: "rewind_session";
  superseded: TurnWrite[];
  sessionPatch: SessionPatch;
  /** The mode the turn began in, when the session has changed it since. */
  modeChange?: ModeHistoryEntry;
}

/** A decision that writes in one store step: claiming the session's lease, but for a queued turn's change. */
export type LeasedDecision =
  | StartTurn
  | EnqueueTurn
  | DequeueTurn
  | CancelQueued
  | ResumeTurn
  | RerunRound
  | FailRound
  | FailInterrupted
  | CancelTurn
  | RewindSession;

/** What a request does, decided from what was read (`decideTurnRequest`). */
export type TurnDecision =
  | {
      type: "answer";
      round: number;
      /** The round's stored result. */
      result: InvokeResult<AgentExecuteResponse>;
      /** Whether its turn streams its answers. */
      stream: boolean;
    }
  | { type: "refuse"; failure: InvokeFailure }
  /** The turn is queued (or, for a background request, under way): the request waits for its answer. */
  | { type: "follow"; turn: TurnRecord }
  | Exclude<LeasedDecision, FailInterrupted | CancelTurn | RewindSession | DequeueTurn | CancelQueued>;

/** What the store writes for `decision`, decided from `state`: applied only while the session is as read. */
export function decisionWrite(state: TurnState, decision: LeasedDecision, now: Date): UnkeyedChange {
  // No session has version 0: a write that expects it of a missing session is stale.
  const versioned = { guard: "version", expectVersion: state.session?.version ?? 0 } as const;
  switch (decision.type) {
    case "start_turn": {
      const { create, turn, sessionPatch, closeOpenTurn, modeChange } = decision;
      return {
        now,
        ...(create ? { guard: "create", create } : versioned),
        insertTurn: turn,
        ...(closeOpenTurn ? { turnPatches: [closeOpenTurn] } : {}),
        sessionPatch,
        ...(modeChange ? { modeChange } : {}),
      };
    }
    case "resume_turn":
      return { now, ...versioned, turnPatches: [{ turnId: decision.turn.turnId, patch: decision.patch }] };
    case "enqueue_turn":
      return { now, guard: "queue", expectVersion: versioned.expectVersion, insertTurn: decision.turn };
    case "cancel_queued":
      return {
        now,
        guard: "queue",
        expectVersion: versioned.expectVersion,
        turnPatches: [decision.cancelled],
      };
    case "dequeue_turn": {
      const { turn, patch, sessionPatch, modeChange } = decision;
      return {
        now,
        ...versioned,
        turnPatches: [{ turnId: turn.turnId, patch }],
        sessionPatch,
        ...(modeChange ? { modeChange } : {}),
      };
    }
    case "rerun_round":
    case "fail_round": {
      const { turn, reopen } = decision;
      if (!reopen) return { now, ...versioned };
      return {
        now,
        ...versioned,
        turnPatches: [{ turnId: turn.turnId, patch: reopen }],
        sessionPatch: { openTurnId: turn.turnId },
      };
    }
    case "fail_interrupted":
      return {
        now,
        ...versioned,
        turnPatches: [decision.failed],
        sessionPatch: decision.sessionPatch,
        releaseLease: true,
      };
    case "rewind_session": {
      const { superseded, sessionPatch, modeChange } = decision;
      return {
        now,
        ...versioned,
        turnPatches: superseded,
        sessionPatch,
        ...(modeChange ? { modeChange } : {}),
        releaseLease: true,
      };
    }
    case "cancel_turn":
      return {
        now,
        guard: "override",
        expectVersion: versioned.expectVersion,
        turnPatches: [decision.cancelled],
        sessionPatch: decision.sessionPatch,
      };
  }
}

/** Whether the decision starts or resumes a running turn: only those count against the running-turn cap. */
export function runsTurn(decision: LeasedDecision): boolean {
  return (
    decision.type === "start_turn" || decision.type === "resume_turn" || decision.type === "dequeue_turn"
  );
}
