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
import { canTake, isOpen, nextStatus } from "../lifecycle/turn-lifecycle.js";
import type { TurnState } from "../ports/turn-store.js";
import { type ConversationCursor, EMPTY_CURSOR } from "../records/conversation-cursor.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionRecord } from "../records/session-record.js";
import { NO_USAGE } from "../records/turn-progress.js";
import type { TurnPatch, TurnRecord, TurnRound } from "../records/turn-record.js";
import {
  contextGone,
  MAX_QUEUED_TURNS,
  notAwaiting,
  queueFull,
  sessionBusy,
  stillAnswering,
  turnIdConflict,
  turnNotFound,
  unconfiguredContext,
} from "./entry-failures.js";
import { toolResultsMismatch } from "./tool-results-mismatch.js";
import type {
  CancelQueued,
  CancelTurn,
  DequeueTurn,
  FailInterrupted,
  RewindSession,
  StartTurn,
  TurnDecision,
  TurnWrite,
} from "./turn-decision.js";

/** What a request's decision is made from. */
export interface TurnRequestInput {
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
export function decideTurnRequest(input: TurnRequestInput): TurnDecision {
  const { request } = input;
  return isToolContinuationRequest(request) ? continuation(input, request) : userTurn(input, request);
}

/**
 * The reaper's decision for a session whose lease expired: its open turn, still running, fails with
 * TURN_INTERRUPTED; undefined when the session moved on since it was found.
 */
export function decideReap(state: TurnState, now: Date): FailInterrupted | undefined {
  const { session, turn } = state;
  if (!session || !turn || session.openTurnId !== turn.turnId || !canTake(turn.status, "lease_lost")) {
    return undefined;
  }
  const { turnPatch, sessionPatch } = interruptedTurn(turn, now);
  return { type: "fail_interrupted", failed: { turnId: turn.turnId, patch: turnPatch }, sessionPatch };
}

/**
 * A client's cancel of the turn `state.turn`: it ends `cancelled` when it is the session's open turn; undefined
 * when it has ended already (a cancel sent again changes nothing).
 */
export function decideCancel(state: TurnState, now: Date): CancelTurn | CancelQueued | undefined {
  const { session, turn } = state;
  if (!session || !turn) return undefined;
  // A queued turn ends without touching the session: the turn before it runs on.
  if (canTake(turn.status, "dequeue")) {
    return {
      type: "cancel_queued",
      cancelled: { turnId: turn.turnId, patch: cancelledTurn(turn, now).turnPatch },
    };
  }
  if (session.openTurnId !== turn.turnId || !isOpen(turn.status)) return undefined;
  const { turnPatch, sessionPatch } = cancelledTurn(turn, now);
  return { type: "cancel_turn", cancelled: { turnId: turn.turnId, patch: turnPatch }, sessionPatch };
}

/**
 * A rewind before `turn` of `session`, whose turns are `turns`: `turn` and every later turn the table lets take
 * `rewind` are superseded, and the cursor returns to `turn`'s start (a compaction made since then no longer
 * applies: the cursor it restores predates it), the mode to the one `turn` began in (with its ModeHistory row,
 * when that differs). `busy` while the session holds an open turn; `undefined` when `turn` is superseded already
 * (a rewind sent again: nothing to do).
 */
export function decideRewind(
  session: SessionRecord,
  turns: readonly TurnRecord[],
  turn: TurnRecord,
  now: Date,
): RewindSession | "busy" | undefined {
  // Queued turns wait to continue the conversation as it is: the session is busy until they have run.
  if (session.openTurnId !== null || turns.some((later) => canTake(later.status, "dequeue"))) return "busy";
  if (!canTake(turn.status, "rewind")) return undefined;
  const superseded = turns
    .filter((later) => later.sequence >= turn.sequence && canTake(later.status, "rewind"))
    .map((later) => ({
      turnId: later.turnId,
      patch: { status: nextStatus(later.status, "rewind"), completedAt: later.completedAt ?? now },
    }));
  const sessionPatch = { cursor: turn.startCursor };
  if (turn.mode === session.mode) return { type: "rewind_session", superseded, sessionPatch };
  const modeChange = {
    principal: session.principal,
    sessionId: session.sessionId,
    turnId: turn.turnId,
    previousMode: session.mode,
    newMode: turn.mode,
    reason: `Rewound before turn ${turn.turnId}, which began in mode ${turn.mode}.`,
    changedBy: session.principal,
    changedAt: now,
  };
  return {
    type: "rewind_session",
    superseded,
    sessionPatch: { ...sessionPatch, mode: turn.mode },
    modeChange,
  };
}

function userTurn(input: TurnRequestInput, request: UserTurnRequest): TurnDecision {
  const { state, hash, catalog } = input;
  const { session, turn } = state;
  // A turn sent again is judged as stored, even when its context has left the configuration since.
  if (session && turn) {
    if (turn.rounds[0]?.requestHash !== hash) return refuse(turnIdConflict(turn.turnId));
    return sentAgain(session, turn, 0, catalog, request.background === true);
  }
  const requested = catalog.conversationContext(request.conversationContextId);
  if (!requested) return refuse(unconfiguredContext());
  if (session) return nextUserTurn(input, request, session);
  const mode = catalog.defaultModeOf(requested).id;
  const create = {
    conversationContextId: requested.id,
    agentContextId: request.agentContextId ?? null,
    mode,
  };
  const start = turnStart({
    ...input,
    request,
    solutionContextText: null,
    sequence: 1,
    mode,
    cursor: EMPTY_CURSOR,
  });
  return { ...start, create, context: requested, warnings: [] };
}

/** A new user turn of an existing session: in the session's mode, closing the turn it still holds open. */
function nextUserTurn(
  input: TurnRequestInput,
  request: UserTurnRequest,
  session: SessionRecord,
): TurnDecision {
  const { state, catalog, now } = input;
  const context = catalog.conversationContext(session.conversationContextId);
  if (!context) return refuse(contextGone(session));
  const { openTurn, queued } = state;
  const multitask = request.multitask ?? "reject";
  // Behind a running (or awaiting) turn, or turns queued already, a turn that asks to wait joins the queue.
  if (multitask === "enqueue" && (openTurn || queued))
    return enqueued(input, request, session, queued?.count ?? 0);
  // Queued turns go first; only an interrupt starts before them.
  if (queued && multitask !== "interrupt") return refuse(sessionBusy(session.sessionId));
  const warnings = contextKept(request, context);
  const { mode, modeChange, warning } = modeOfNewTurn(session, request.turnId, context, catalog, now);
  if (warning) warnings.push(warning);
  const closing = state.openTurn && closedByNewTurn(state.openTurn, now);
  const start = turnStart({
    ...input,
    request,
    solutionContextText: session.solutionContextText,
    sequence: session.turnCount + 1,
    mode,
    cursor: closing?.cursor ?? session.cursor,
  });
  return {
    ...start,
    ...(closing ? { closeOpenTurn: closing.write } : {}),
    ...(modeChange ? { modeChange } : {}),
    context,
    warnings,
  };
}

/** A user turn kept `queued` behind the session's turns; refused once the session keeps MAX_QUEUED_TURNS. */
function enqueued(
  input: TurnRequestInput,
  request: UserTurnRequest,
  session: SessionRecord,
  queuedCount: number,
): TurnDecision {
  if (queuedCount >= MAX_QUEUED_TURNS) return refuse(queueFull(session.sessionId));
  // Its mode and cursor are placeholders until it starts, when the session's then are taken (`decideDequeue`).
  const turn = newTurn({
    ...input,
    request,
    status: nextStatus("new", "enqueue"),
    sequence: session.turnCount + 1,
    mode: session.mode,
    cursor: session.cursor,
  });
  return { type: "enqueue_turn", turn };
}

/**
 * The start of the session's first queued turn once no turn holds the session: from the session's cursor, in its
 * mode (reset when no longer configured), latching its solution context, as a user turn starts. Undefined while
 * a turn holds the session, or when none is queued.
 */
export function decideDequeue(state: TurnState, catalog: AgentCatalog, now: Date): DequeueTurn | undefined {
  const { session, queued } = state;
  if (!session || !queued || session.openTurnId !== null || !canTake(queued.next.status, "dequeue")) {
    return undefined;
  }
  const request = queued.next.rounds[0]?.request as UserTurnRequest;
  const context = catalog.conversationContext(session.conversationContextId);
  if (!context) return undefined;
  const warnings = contextKept(request, context);
  const { mode, modeChange, warning } = modeOfNewTurn(session, request.turnId, context, catalog, now);
  if (warning) warnings.push(warning);
  const patch = { status: nextStatus(queued.next.status, "dequeue"), startCursor: session.cursor, mode };
  const sessionPatch = {
    openTurnId: request.turnId,
    solutionContextText: latchedSolutionContext(request, session.solutionContextText),
    cursor: session.cursor,
    mode,
  };
  return {
    type: "dequeue_turn",
    busy: "session_busy",
    turn: { ...queued.next, ...patch },
    patch,
    sessionPatch,
    ...(modeChange ? { modeChange } : {}),
    context,
    request,
    warnings,
  };
}

/**
 * The mode a new turn runs in: the session's, or the context's default (with a MODE_RESET warning and its
 * ModeHistory row) when the session's is no longer configured.
 */
function modeOfNewTurn(
  session: SessionRecord,
  turnId: string,
  context: ConversationContext,
  catalog: AgentCatalog,
  now: Date,
): { mode: string; modeChange?: ModeHistoryEntry; warning?: InvokeWarning } {
  if (catalog.modes.has(session.mode)) return { mode: session.mode };
  const mode = catalog.defaultModeOf(context).id;
  const modeChange = {
    principal: session.principal,
    sessionId: session.sessionId,
    turnId,
    previousMode: session.mode,
    newMode: mode,
    reason: `Mode ${session.mode} is no longer configured.`,
    changedBy: session.principal,
    changedAt: now,
  };
  const warning = {
    code: "MODE_RESET",
    message: `Mode ${session.mode} is no longer configured; the session is back in ${mode}.`,
  } as const;
  return { mode, modeChange, warning };
}

/**
 * The session's open turn, closed by a new user turn: abandoned when it awaits client tools (the user moved on),
 * failed with TURN_INTERRUPTED when an instance whose lease expired left it running (should that lease still be
 * held, the start is refused busy). Either way the provider's view rolls back: to `cursor`.
 */
function closedByNewTurn(
  open: TurnRecord,
  now: Date,
): { write: TurnWrite; cursor: ConversationCursor } | undefined {
  if (canTake(open.status, "abandon") && open.pending) {
    const patch = { status: nextStatus(open.status, "abandon"), pending: null, completedAt: now };
    return { write: { turnId: open.turnId, patch }, cursor: open.pending.resumeCursor };
  }
  if (canTake(open.status, "lease_lost")) {
    return {
      write: { turnId: open.turnId, patch: interruptedTurn(open, now).turnPatch },
      cursor: open.startCursor,
    };
  }
  return undefined;
}

function continuation(input: TurnRequestInput, request: ToolContinuationRequest): TurnDecision {
  const { key, state, hash, catalog } = input;
  const { session, turn } = state;
  if (!session || !turn) return refuse(turnNotFound(key, request.turnId, session !== undefined));
  const answered = turn.rounds.slice(1).findIndex((round) => round.requestHash === hash);
  if (answered >= 0) return sentAgain(session, turn, answered + 1, catalog, false);
  if (!canTake(turn.status, "continuation") || !turn.pending) return refuse(notAwaiting(turn));

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
  background: boolean,
): TurnDecision {
  const round = turn.rounds[index] as TurnRound;
  const reopens = isReapedRound(turn, index) && nothingFollows(session, turn);
  if (round.result && !reopens) {
    return { type: "answer", round: index, result: round.result, stream: turn.stream };
  }
  // Not reopened, it runs again only as the session's open turn, in a status the table lets run again.
  if (!reopens && (!canTake(turn.status, "rerun") || session.openTurnId !== turn.turnId)) {
    // A queued turn is waited for; so is any turn under way when its request asks for no answer now.
    if (canTake(turn.status, "dequeue") || background) return { type: "follow", turn };
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
  const { request, mode, cursor } = input;
  const turn = newTurn({ ...input, status: nextStatus("new", "start") });
  const solutionContextText = latchedSolutionContext(request, input.solutionContextText);
  return {
    type: "start_turn",
    busy: "session_busy",
    turn,
    sessionPatch: { openTurnId: turn.turnId, solutionContextText, cursor, mode },
    request,
  };
}

/** Latched by user turns (AGN-034 §4.5): absent keeps it, empty clears it. */
function latchedSolutionContext(request: UserTurnRequest, stored: string | null): string | null {
  return request.solutionContextText === undefined ? stored : request.solutionContextText || null;
}

/** A user turn's record as it is stored first: `running` as it starts, or `queued`. */
function newTurn(input: {
  key: SessionKey;
  sequence: number;
  request: UserTurnRequest;
  hash: string;
  status: TurnRecord["status"];
  mode: string;
  cursor: ConversationCursor;
  now: Date;
}): TurnRecord {
  const { key, request, hash, mode, cursor, now } = input;
  return {
    principal: key.principal,
    sessionId: key.sessionId,
    turnId: request.turnId,
    sequence: input.sequence,
    status: input.status,
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

function refuse(failure: InvokeFailure): TurnDecision {
  return { type: "refuse", failure };
}
