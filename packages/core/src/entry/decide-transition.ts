import {
  type AgentExecuteRequest,
  fail,
  type InvokeFailure,
  type InvokeWarning,
  isToolContinuationRequest,
  type ToolContinuationRequest,
  type UserTurnRequest,
} from "@aptix/contracts";
import type { AgentCatalog } from "../catalog/agent-catalog.js";
import type { ConversationContext } from "../catalog/conversation-context.js";
import type { RoundOpening } from "../composition/round-opening.js";
import { cancelledTurn, interruptedFailure, interruptedTurn } from "../lifecycle/turn-endings.js";
import { nextStatus } from "../lifecycle/turn-lifecycle.js";
import type { TurnState } from "../ports/turn-store.js";
import { type ConversationCursor, EMPTY_CURSOR } from "../records/conversation-cursor.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionRecord } from "../records/session-record.js";
import { NO_USAGE } from "../records/turn-progress.js";
import type { TurnPatch, TurnRecord, TurnRound } from "../records/turn-record.js";
import {
  contextGone,
  notAwaiting,
  stillAnswering,
  turnIdConflict,
  turnNotFound,
  unconfiguredContext,
} from "./entry-failures.js";
import { toolResultsMismatch } from "./tool-results-mismatch.js";
import type { CancelTurn, FailInterrupted, StartTurn, TurnTransition, TurnWrite } from "./turn-transition.js";

/** What a request's transition is decided from. */
export interface TransitionInput {
  key: SessionKey;
  /** The session and turns as read (`TurnStore.readTurnState`), without a lease. */
  state: TurnState;
  request: AgentExecuteRequest;
  /** The request's `requestHash`. */
  hash: string;
  catalog: AgentCatalog;
  now: Date;
}

/**
 * Layer 6 — Entry's decision (docs/architecture.md, "Turn lifecycle"): what a request does to its session and
 * turn, from what was read alone. Pure: it writes nothing and reads nothing more; each lifecycle rule
 * (idempotency, conflicts, abandon, interrupted turns, exact tool-result match, runs again) is written here once.
 */
export function decideTransition(input: TransitionInput): TurnTransition {
  const { request } = input;
  return isToolContinuationRequest(request) ? continuation(input, request) : userTurn(input, request);
}

/**
 * The reaper's transition for a session whose lease expired: its open turn, still running, fails with
 * TURN_INTERRUPTED; undefined when the session moved on since it was found.
 */
export function interruptTransition(state: TurnState, now: Date): FailInterrupted | undefined {
  const { session, turn } = state;
  if (!session || !turn || session.openTurnId !== turn.turnId || turn.status !== "running") return undefined;
  const { turnPatch, sessionPatch } = interruptedTurn(turn, now);
  return { type: "fail_interrupted", failed: { turnId: turn.turnId, patch: turnPatch }, sessionPatch };
}

/**
 * A client's cancel of the turn `state.turn`: it ends `cancelled` when it is the session's open turn, running or
 * awaiting client tools; undefined when it has ended already (a cancel sent again changes nothing).
 */
export function cancelTransition(state: TurnState, now: Date): CancelTurn | undefined {
  const { session, turn } = state;
  if (!session || !turn || session.openTurnId !== turn.turnId) return undefined;
  if (turn.status !== "running" && turn.status !== "awaiting_client_tools") return undefined;
  const { turnPatch, sessionPatch } = cancelledTurn(turn, now);
  return { type: "cancel_turn", cancelled: { turnId: turn.turnId, patch: turnPatch }, sessionPatch };
}

function userTurn(input: TransitionInput, request: UserTurnRequest): TurnTransition {
  const { key, state, hash, catalog, now } = input;
  const { session, turn } = state;
  // A turn sent again is judged as stored, even when its context has left the configuration since.
  if (session && turn) {
    if (turn.rounds[0]?.requestHash !== hash) return refuse(turnIdConflict(turn.turnId));
    return sentAgain(session, turn, 0, catalog);
  }
  const requested = catalog.conversationContext(request.conversationContextId);
  if (!requested) return refuse(unconfiguredContext());
  if (!session) {
    const mode = catalog.defaultModeOf(requested).id;
    const create = {
      conversationContextId: requested.id,
      agentContextId: request.agentContextId ?? null,
      mode,
    };
    return {
      ...turnStart({
        key,
        solutionContextText: null,
        sequence: 1,
        request,
        hash,
        mode,
        cursor: EMPTY_CURSOR,
        now,
      }),
      create,
      context: requested,
      warnings: [],
    };
  }
  const context = catalog.conversationContext(session.conversationContextId);
  if (!context) return refuse(contextGone(session));
  const warnings = contextKept(request, context);

  // The mode a new turn runs in: the session's, or the context's default (with a MODE_RESET warning and its
  // ModeHistory row, AGN-011 §5.7) when the session's is no longer configured.
  let mode = session.mode;
  let modeChange: ModeHistoryEntry | undefined;
  if (!catalog.modes.has(mode)) {
    mode = catalog.defaultModeOf(context).id;
    modeChange = {
      principal: session.principal,
      sessionId: session.sessionId,
      turnId: request.turnId,
      previousMode: session.mode,
      newMode: mode,
      reason: `Mode ${session.mode} is no longer configured.`,
      changedBy: session.principal,
      changedAt: now,
    };
    warnings.push({
      code: "MODE_RESET",
      message: `Mode ${session.mode} is no longer configured; the session is back in ${mode}.`,
    });
  }

  // A turn still open here either awaits client tools (the user moved on: abandon it) or was left running by
  // an instance whose lease expired (it stopped: fail it, TURN_INTERRUPTED); should its lease still be held,
  // the start is refused busy. Either way the provider's view rolls back.
  let cursor = session.cursor;
  let closeOpenTurn: TurnWrite | undefined;
  const open = state.openTurn;
  if (open?.status === "awaiting_client_tools" && open.pending) {
    const status = nextStatus(open.status, "abandon");
    closeOpenTurn = { turnId: open.turnId, patch: { status, pending: null, completedAt: now } };
    cursor = open.pending.resumeCursor;
  } else if (open?.status === "running") {
    closeOpenTurn = { turnId: open.turnId, patch: interruptedTurn(open, now).turnPatch };
    cursor = open.startCursor;
  }
  const start = turnStart({
    key,
    solutionContextText: session.solutionContextText,
    sequence: session.turnCount + 1,
    request,
    hash,
    mode,
    cursor,
    now,
  });
  return {
    ...start,
    ...(closeOpenTurn ? { closeOpenTurn } : {}),
    ...(modeChange ? { modeChange } : {}),
    context,
    warnings,
  };
}

function continuation(input: TransitionInput, request: ToolContinuationRequest): TurnTransition {
  const { key, state, hash, catalog } = input;
  const { session, turn } = state;
  if (!session || !turn) return refuse(turnNotFound(key, request.turnId, session !== undefined));
  const answered = turn.rounds.slice(1).findIndex((round) => round.requestHash === hash);
  if (answered >= 0) return sentAgain(session, turn, answered + 1, catalog);
  if (turn.status !== "awaiting_client_tools" || !turn.pending) return refuse(notAwaiting(turn));

  // The request is the turn's next round from here on: even a mismatch is stored as that round's result. Its
  // pending calls keep the cursor the round starts from, so it can run again if interrupted.
  const pending = { ...turn.pending, continueCursor: session.cursor };
  const rounds = [...turn.rounds, { request, requestHash: hash }];
  const round = turn.rounds.length;
  const mismatch = toolResultsMismatch(pending.clientCallIds, request.toolResults);
  if (mismatch !== undefined) {
    const failure = fail(
      "TOOL_RESULTS_MISMATCH",
      `Tool results do not match the turn's tool calls: ${mismatch}. The turn has failed; the session goes on with the next user turn.`,
      {
        expectedToolCallIds: pending.clientCallIds,
        receivedToolCallIds: request.toolResults.map((result) => result.toolCallId),
      },
    );
    return { type: "fail_round", busy: "session_busy", round, turn: { ...turn, rounds }, failure };
  }
  const context = catalog.conversationContext(session.conversationContextId);
  if (!context) {
    const failure = contextGone(session);
    return { type: "fail_round", busy: "session_busy", round, turn: { ...turn, rounds }, failure };
  }
  const patch = { status: nextStatus(turn.status, "continuation"), pending, rounds } satisfies TurnPatch;
  return {
    type: "resume_turn",
    busy: "session_busy",
    turn: { ...turn, ...patch },
    patch,
    context,
    request,
    pending,
  };
}

/**
 * Round `index` of `turn`, sent again (same body). Answered: its stored answer. A round without its answer
 * whose turn still runs is run again from its last durable point once its instance's lease has expired (while
 * that instance holds it, it is still being answered). A round the reaper failed is run again too when nothing
 * followed its turn in the session: its client never saw that answer.
 */
function sentAgain(
  session: SessionRecord,
  turn: TurnRecord,
  index: number,
  catalog: AgentCatalog,
): TurnTransition {
  const round = turn.rounds[index] as TurnRound;
  const reopens = isReapedRound(turn, index) && nothingFollows(session, turn);
  if (round.result && !reopens) {
    return { type: "answer", round: index, result: round.result, stream: turn.stream };
  }
  if (!reopens && (turn.status !== "running" || session.openTurnId !== turn.turnId)) {
    return refuse(stillAnswering());
  }
  // Reopened: running, the round's stored failure removed, the session's open turn again (its cursor is the
  // one the turn started from, restored when it failed; a continuation restarts from the one kept with its
  // pending calls).
  const reopen = reopens ? reopened(turn, index) : undefined;
  const running = reopen ? { ...turn, ...reopen } : turn;
  const base = { round: index, turn: running, ...(reopen ? { reopen } : {}) };
  const context = catalog.conversationContext(session.conversationContextId);
  const restart = restartOf(running, running.rounds[index] as TurnRound);
  if (!context || !restart) {
    const failure = context ? interruptedFailure(turn.turnId) : contextGone(session);
    return { type: "fail_round", busy: "still_answering", ...base, failure };
  }
  const { opening } = restart;
  return {
    type: "rerun_round",
    busy: "still_answering",
    ...base,
    context,
    opening,
    cursor: restart.cursor,
    warnings: opening.type === "user_turn" ? contextKept(opening.request, context) : [],
  };
}

/** The patch that reopens a reaped turn: running again, round `index`'s stored failure removed. */
function reopened(turn: TurnRecord, index: number): TurnPatch {
  const rounds = turn.rounds.map((kept, at) =>
    at === index ? { request: kept.request, requestHash: kept.requestHash } : kept,
  );
  return { status: nextStatus(turn.status, "rerun"), error: null, completedAt: null, rounds };
}

/**
 * Whether round `index` is the last round of a turn failed with TURN_INTERRUPTED while it ran: the instance
 * running it stopped, and the reaper (or a newer turn) failed it.
 */
function isReapedRound(turn: TurnRecord, index: number): boolean {
  return (
    turn.status === "failed" &&
    index === turn.rounds.length - 1 &&
    turn.error?.code === "TURN_INTERRUPTED" &&
    turn.rounds[index]?.result?.successful === false
  );
}

/** Whether `turn` is still the session's latest, with no turn open after it: only then may it run again. */
function nothingFollows(session: SessionRecord, turn: TurnRecord): boolean {
  return session.openTurnId === null && session.turnCount === turn.sequence;
}

/** How round `round` of a running turn opens again, and the cursor it starts from; undefined when not kept. */
function restartOf(
  turn: TurnRecord,
  round: TurnRound,
): { opening: RoundOpening; cursor: ConversationCursor } | undefined {
  const { request } = round;
  if (!isToolContinuationRequest(request)) {
    return { opening: { type: "user_turn", request }, cursor: turn.startCursor };
  }
  const pending = turn.pending;
  if (!pending?.continueCursor) return undefined;
  return {
    opening: { type: "tool_results", toolResults: request.toolResults, pending },
    cursor: pending.continueCursor,
  };
}

/** A user turn's running turn, and what its session changes with its start. */
function turnStart(input: {
  key: SessionKey;
  solutionContextText: string | null;
  sequence: number;
  request: UserTurnRequest;
  hash: string;
  mode: string;
  cursor: ConversationCursor;
  now: Date;
}): Pick<StartTurn, "type" | "busy" | "turn" | "sessionPatch" | "request"> {
  const { key, request, hash, mode, cursor, now } = input;
  // Latched by user turns (AGN-034 §4.5): absent keeps it, empty clears it.
  const solutionContextText =
    request.solutionContextText === undefined
      ? input.solutionContextText
      : request.solutionContextText || null;
  const turn: TurnRecord = {
    principal: key.principal,
    sessionId: key.sessionId,
    turnId: request.turnId,
    sequence: input.sequence,
    status: nextStatus("new", "start"),
    mode,
    stream: request.stream ?? false,
    rounds: [{ request, requestHash: hash }],
    pending: null,
    startCursor: cursor,
    toolExecutions: [],
    files: [],
    usage: NO_USAGE,
    llmCallCount: 0,
    error: null,
    createdAt: now,
    updatedAt: now,
    completedAt: null,
  };
  return {
    type: "start_turn",
    busy: "session_busy",
    turn,
    sessionPatch: { openTurnId: turn.turnId, solutionContextText, cursor, mode },
    request,
  };
}

/** The warning of a user turn naming another conversation context than its session's. */
function contextKept(request: UserTurnRequest, context: ConversationContext): InvokeWarning[] {
  if (request.conversationContextId === undefined || request.conversationContextId === context.id) return [];
  return [
    {
      code: "CONVERSATION_CONTEXT_KEPT",
      message: `The session keeps its conversation context ${JSON.stringify(context.id)}; conversationContextId applies to new sessions only.`,
    },
  ];
}

function refuse(failure: InvokeFailure): TurnTransition {
  return { type: "refuse", failure };
}
