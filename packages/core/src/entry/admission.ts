import {
  type AgentExecuteRequest,
  type AgentExecuteResponse,
  fail,
  type InvokeFailure,
  type InvokeResult,
  type InvokeWarning,
  isToolContinuationRequest,
  ok,
  type ToolContinuationRequest,
  type UserTurnRequest,
} from "@aptix/contracts";
import type { AgentCatalog } from "../catalog/agent-catalog.js";
import type { ConversationContext } from "../catalog/conversation-context.js";
import type { RoundOpening } from "../composition/round-opening.js";
import type { SessionLease, TurnPersistence } from "../persistence/turn-persistence.js";
import { interruptedFailure, type TurnSettlement } from "../persistence/turn-settlement.js";
import type { Clock } from "../ports/clock.js";
import type { ContentHashService } from "../ports/content-hash-service.js";
import type { TurnStart } from "../ports/session-store.js";
import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { SessionKey, SessionRecord } from "../records/session-record.js";
import { NO_USAGE } from "../records/turn-progress.js";
import type { PendingToolCalls, TurnPatch, TurnRecord, TurnRound } from "../records/turn-record.js";
import { contextGone, notAwaiting, stillAnswering, turnIdConflict, turnNotFound } from "./entry-failures.js";
import { requestHash } from "./request-hash.js";
import { toolResultsMismatch } from "./tool-results-mismatch.js";

/**
 * A round let into its turn and ready to run: the data the round runner needs. `round` is the index of the
 * request in its turn (0 for the user turn, then one per continuation).
 */
export interface RunningRound {
  round: number;
  lease: SessionLease;
  session: SessionRecord;
  turn: TurnRecord;
  context: ConversationContext;
  opening: RoundOpening;
  warnings: InvokeWarning[];
  /** The round runs again after its instance stopped: its streamed events follow the earlier attempt's. */
  rerun?: boolean;
}

/**
 * What admission decided for a request let into its turn; a refusal is the InvokeFailure itself.
 * - `stored_answer`: the round was answered before; its answer, again.
 * - `run_round`: the round runs now, under the lease it holds.
 * - `settle_failure`: the round fails before it runs (its turn fails with it), under the lease it holds.
 */
export type Admission =
  | {
      type: "stored_answer";
      round: number;
      result: InvokeResult<AgentExecuteResponse>;
      /** Whether its turn streams its answers (a continuation's answer streams when its user turn did). */
      stream: boolean;
    }
  | ({ type: "run_round" } & RunningRound)
  | { type: "settle_failure"; round: number; lease: SessionLease; turn: TurnRecord; failure: InvokeFailure };

export interface TurnAdmissionOptions {
  catalog: AgentCatalog;
  persistence: TurnPersistence;
  settlement: TurnSettlement;
  clock: Clock;
  hashing: ContentHashService;
}

/**
 * Layer 6 — Entry's admission (docs/architecture.md, "Turn lifecycle"): judges a request against its turn
 * (idempotency, conflicts, busy, abandon, exact tool-result match) and answers what to do with it as data.
 * It writes only to let a round in (start or resume its turn); running the round is the caller's.
 */
export class TurnAdmission {
  readonly #catalog: AgentCatalog;
  readonly #persistence: TurnPersistence;
  readonly #settlement: TurnSettlement;
  readonly #clock: Clock;
  readonly #hashing: ContentHashService;

  constructor(options: TurnAdmissionOptions) {
    this.#catalog = options.catalog;
    this.#persistence = options.persistence;
    this.#settlement = options.settlement;
    this.#clock = options.clock;
    this.#hashing = options.hashing;
  }

  admit(key: SessionKey, request: AgentExecuteRequest): Promise<InvokeResult<Admission>> {
    const hash = requestHash(request, this.#hashing);
    return isToolContinuationRequest(request)
      ? this.#admitContinuation(key, request, hash)
      : this.#admitUserTurn(key, request, hash);
  }

  async #admitUserTurn(
    key: SessionKey,
    request: UserTurnRequest,
    hash: string,
  ): Promise<InvokeResult<Admission>> {
    const requested = this.#catalog.conversationContext(request.conversationContextId);
    if (!requested) {
      // A turn sent again is judged as stored even when its context has left the configuration since.
      const existing = await this.#persistence.getTurn(key, request.turnId);
      if (existing) return this.#userTurnStored(key, existing, hash);
      return fail("VALIDATION_FAILED", "conversationContextId names no configured conversation context.", {
        fields: [{ path: "conversationContextId", message: "names no configured conversation context" }],
      });
    }
    // One store step: the stored turn, or the lease with the turn started when nothing special is due.
    const begun = await this.#persistence.begin(key, {
      turnId: request.turnId,
      create: {
        conversationContextId: requested.id,
        agentContextId: request.agentContextId ?? null,
        mode: this.#catalog.defaultModeOf(requested).id,
      },
      plan: (session) => this.#plainStart(session, request, hash),
    });
    if (!begun.successful) return begun;
    if (begun.result.type === "turn_exists") return this.#userTurnStored(key, begun.result.turn, hash);
    const { session, lease, turn } = begun.result;
    const context = this.#catalog.conversationContext(session.conversationContextId);
    if (turn && context) {
      return userTurnRound({
        lease,
        session,
        turn,
        context,
        request,
        warnings: contextKept(request, context),
      });
    }
    return releasingOnThrow(lease, () => this.#beginTurn(lease, session, request, hash));
  }

  /** A user turn whose id the session has: the same body gets its stored answer (or runs again), another conflicts. */
  #userTurnStored(key: SessionKey, existing: TurnRecord, hash: string): Promise<InvokeResult<Admission>> {
    const first = existing.rounds[0];
    if (first?.requestHash !== hash) return Promise.resolve(turnIdConflict(existing.turnId));
    return first.result && !isReapedRound(existing, 0)
      ? Promise.resolve(storedAnswer(existing, 0, first.result))
      : this.#admitRetry(key, existing.turnId, 0);
  }

  /**
   * The turn a user turn starts with its claim, when nothing is due first: no turn open in the session (none
   * to abandon or fail), its context and mode still configured. Otherwise undefined: `#beginTurn` sees to it.
   */
  #plainStart(session: SessionRecord, request: UserTurnRequest, hash: string): TurnStart | undefined {
    if (session.openTurnId !== null || !this.#catalog.modes.has(session.mode)) return undefined;
    if (!this.#catalog.conversationContext(session.conversationContextId)) return undefined;
    return turnStart({
      session,
      request,
      hash,
      mode: session.mode,
      cursor: session.cursor,
      now: this.#clock.now(),
    });
  }

  async #beginTurn(
    lease: SessionLease,
    session: SessionRecord,
    request: UserTurnRequest,
    hash: string,
  ): Promise<InvokeResult<Admission>> {
    // A request racing this one started the turn after this one's first read, and its instance stopped
    // (the lease expired): the open turn is this request's own, to run again, never to fail or abandon.
    if (session.openTurnId === request.turnId) {
      return this.#userTurnSentAgain(lease, session, request.turnId, hash);
    }
    const now = this.#clock.now();
    const context = this.#catalog.conversationContext(session.conversationContextId);
    if (!context) {
      await lease.release();
      return contextGone(session);
    }
    const warnings = contextKept(request, context);
    const mode = await this.#modeStillConfigured({ lease, session, context, turnId: request.turnId, now });
    if (!mode.successful) {
      await lease.release();
      return mode;
    }
    warnings.push(...mode.warnings);

    // A turn still open here either awaits client tools (the user moved on: abandon it) or was left running
    // by an instance whose lease expired (it stopped: fail it, TURN_INTERRUPTED). Either way the provider's
    // view rolls back.
    let cursor = session.cursor;
    let abandonTurnId: string | undefined;
    if (session.openTurnId !== null) {
      const open = await this.#persistence.getTurn(session, session.openTurnId);
      if (open?.status === "awaiting_client_tools" && open.pending) {
        abandonTurnId = open.turnId;
        cursor = open.pending.resumeCursor;
      } else if (open?.status === "running") {
        const failed = await this.#settlement.interrupted(lease, open);
        if (!failed.successful) return failed;
        cursor = open.startCursor;
      }
    }
    const { turn, sessionPatch } = turnStart({ session, request, hash, mode: mode.result, cursor, now });
    const started = await lease.startTurn(turn, sessionPatch, abandonTurnId);
    if (!started.successful) {
      // The turn was started (and ended) by a request racing this one after its first read: judged by the
      // request's hash like any turn sent again.
      if (started.errors[0].code === "TURN_ID_CONFLICT") {
        return this.#userTurnSentAgain(lease, session, turn.turnId, hash);
      }
      await lease.release();
      return started;
    }
    Object.assign(session, sessionPatch);
    return userTurnRound({ lease, session, turn, context, request, warnings });
  }

  /**
   * The mode a new turn runs in: the session's, or the context's default (with a MODE_RESET warning and its
   * ModeHistory row, AGN-011 §5.7) when the session's is no longer configured.
   */
  async #modeStillConfigured(input: {
    lease: SessionLease;
    session: SessionRecord;
    context: ConversationContext;
    turnId: string;
    now: Date;
  }): Promise<InvokeResult<string>> {
    const { lease, session, context, turnId, now } = input;
    if (this.#catalog.modes.has(session.mode)) return ok(session.mode);
    const mode = this.#catalog.defaultModeOf(context).id;
    const reset = await lease.changeMode({
      principal: session.principal,
      sessionId: session.sessionId,
      turnId,
      previousMode: session.mode,
      newMode: mode,
      reason: `Mode ${session.mode} is no longer configured.`,
      changedBy: session.principal,
      changedAt: now,
    });
    if (!reset.successful) return reset;
    return ok(mode, [
      {
        code: "MODE_RESET",
        message: `Mode ${session.mode} is no longer configured; the session is back in ${mode}.`,
      },
    ]);
  }

  /**
   * A user turn found under the lease, with the id of the one this request would start: the same body is that
   * turn sent again (its stored answer, SESSION_BUSY, or run again once its instance stopped: see #rerun);
   * another body is TURN_ID_CONFLICT.
   */
  async #userTurnSentAgain(
    lease: SessionLease,
    session: SessionRecord,
    turnId: string,
    hash: string,
  ): Promise<InvokeResult<Admission>> {
    const turn = await this.#persistence.getTurn(lease.key, turnId);
    if (turn?.rounds[0]?.requestHash !== hash) {
      await lease.release();
      return turnIdConflict(turnId);
    }
    return this.#rerun(lease, session, { turn }, 0);
  }

  /**
   * One store step lets a continuation in when nothing special is due (`#plainResume`); otherwise the turn as
   * read (or as read again under the lease, when it moved on meanwhile) is judged here.
   */
  async #admitContinuation(
    key: SessionKey,
    request: ToolContinuationRequest,
    hash: string,
  ): Promise<InvokeResult<Admission>> {
    const resumed = await this.#persistence.resume(key, request.turnId, (session, turn) =>
      this.#plainResume(session, turn, request, hash),
    );
    switch (resumed.type) {
      case "not_found":
        return turnNotFound(key, request.turnId, !!(await this.#persistence.getSession(key)));
      case "resumed": {
        const { lease, session, turn } = resumed;
        const context = this.#catalog.conversationContext(session.conversationContextId);
        if (!context || !turn.pending) throw new Error("a resumed turn has its context and pending calls");
        return ok(continuationRound({ lease, session, turn, context, request, pending: turn.pending }));
      }
      case "claimed": {
        const { lease, session, turn } = resumed;
        return releasingOnThrow(lease, () =>
          this.#resume({ lease, session, request, hash, known: turn, turn }),
        );
      }
      case "unclaimed":
        break;
    }
    const known = resumed.turn;
    const answered = answeredContinuation(known, hash);
    if (answered) {
      const index = known.rounds.indexOf(answered);
      return answered.result && !isReapedRound(known, index)
        ? storedAnswer(known, index, answered.result)
        : this.#admitRetry(key, known.turnId, index);
    }
    if (known.status !== "awaiting_client_tools") return notAwaiting(known);
    if (resumed.refusal) return resumed.refusal;
    // The plan declined a turn that awaits these results: they do not match, or the context is gone.
    const claimed = await this.#persistence.claim(key, undefined, request.turnId);
    if (!claimed.successful) return claimed;
    const { session, lease, turn } = claimed.result;
    return releasingOnThrow(lease, () => this.#resume({ lease, session, request, hash, known, turn }));
  }

  /**
   * The patch that resumes a turn with its client's tool results in the claim's own step, when nothing special
   * is due: it awaits them and has not had these results yet, they match its calls, its context is configured.
   * Otherwise undefined: `#resume` sees to it.
   */
  #plainResume(
    session: SessionRecord,
    turn: TurnRecord,
    request: ToolContinuationRequest,
    hash: string,
  ): TurnPatch | undefined {
    if (turn.status !== "awaiting_client_tools" || !turn.pending || answeredContinuation(turn, hash)) {
      return undefined;
    }
    if (toolResultsMismatch(turn.pending.clientCallIds, request.toolResults) !== undefined) return undefined;
    if (!this.#catalog.conversationContext(session.conversationContextId)) return undefined;
    return { status: "running", ...resumedRounds(session, turn, turn.pending, request, hash) };
  }

  /** A continuation under the lease: the turn's next round, or a refusal when the turn moved on meanwhile. */
  async #resume(input: {
    lease: SessionLease;
    session: SessionRecord;
    request: ToolContinuationRequest;
    hash: string;
    /** The turn as read before the lease was claimed. */
    known: TurnRecord;
    /** The turn as read with the claim: another instance may have moved it on since the first read. */
    turn: TurnRecord | undefined;
  }): Promise<InvokeResult<Admission>> {
    const { lease, session, request, hash, known, turn } = input;
    if (!turn?.pending || turn.status !== "awaiting_client_tools") {
      const nowAnswered = turn && answeredContinuation(turn, hash);
      // Sent again while this request waited: answered meanwhile, or interrupted since (run it again).
      if (nowAnswered) {
        return this.#rerun(lease, session, { turn }, turn.rounds.indexOf(nowAnswered));
      }
      await lease.release();
      return notAwaiting(turn ?? known);
    }
    // The request is the turn's next round from here on: even a mismatch is stored as that round's result.
    const { pending, rounds } = resumedRounds(session, turn, turn.pending, request, hash);
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
      return ok({ type: "settle_failure", round, lease, turn: { ...turn, rounds }, failure });
    }
    const resumed = await lease.updateTurn(
      turn.turnId,
      { status: "running", pending, rounds },
      { expectStatus: "awaiting_client_tools" },
    );
    if (!resumed.successful) {
      await lease.release();
      return resumed;
    }
    const context = this.#catalog.conversationContext(session.conversationContextId);
    if (!context) {
      return ok({
        type: "settle_failure",
        round,
        lease,
        turn: { ...turn, rounds },
        failure: contextGone(session),
      });
    }
    const running = { ...turn, status: "running" as const, pending, rounds };
    return ok(continuationRound({ lease, session, turn: running, context, request, pending }));
  }

  /**
   * A round sent again before it has its answer. While the instance running it holds the session's lease, it
   * is still being answered (SESSION_BUSY, retryable). Once that lease has expired, that instance stopped:
   * this request takes the session over and runs the round again.
   */
  async #admitRetry(key: SessionKey, turnId: string, index: number): Promise<InvokeResult<Admission>> {
    const claimed = await this.#persistence.claim(key, undefined, turnId);
    if (!claimed.successful) return claimed.errors[0].code === "SESSION_BUSY" ? stillAnswering() : claimed;
    const { session, lease, turn } = claimed.result;
    return releasingOnThrow(lease, () => this.#rerun(lease, session, { turn }, index));
  }

  /** Whether `turn` is still the session's latest, with no turn open after it: only then may it run again. */
  #nothingFollows(session: SessionRecord, turn: TurnRecord): boolean {
    return session.openTurnId === null && session.turnCount === turn.sequence;
  }

  /**
   * Reopens a turn the reaper failed, so its last round can run again: running, that round's stored failure
   * removed, and the session's open turn again (its cursor is the one the turn started from, restored when
   * it failed; a continuation round restarts from the cursor kept with its pending calls).
   */
  async #reopen(lease: SessionLease, turn: TurnRecord): Promise<InvokeResult<TurnRecord>> {
    const rounds = turn.rounds.map((round, index) =>
      index === turn.rounds.length - 1 ? { request: round.request, requestHash: round.requestHash } : round,
    );
    const reopened = { ...turn, status: "running" as const, error: null, completedAt: null, rounds };
    const updated = await lease.updateTurn(
      turn.turnId,
      { status: "running", error: null, completedAt: null, rounds },
      { expectStatus: "failed", sessionPatch: { openTurnId: turn.turnId } },
    );
    return updated.successful ? ok(reopened) : updated;
  }

  /**
   * Runs round `index` of a turn left running again (`read`: the turn as read under `lease`), under `lease`,
   * from its last durable point: the cursor the round started from (the turn's for a user turn, the one kept
   * with the pending calls for a continuation). The round has no answer its client saw, so the client sees nothing twice; the earlier
   * attempt's LLM calls stay in the trace. A round answered meanwhile answers as stored; one the reaper failed
   * while nothing followed it in the session is reopened first.
   */
  async #rerun(
    lease: SessionLease,
    session: SessionRecord,
    read: { turn: TurnRecord | undefined },
    index: number,
  ): Promise<InvokeResult<Admission>> {
    // Read under the lease: the round may have been answered, or its turn failed, since the first read.
    let { turn } = read;
    let round = turn?.rounds[index];
    if (turn && round?.result && isReapedRound(turn, index) && this.#nothingFollows(session, turn)) {
      const reopened = await this.#reopen(lease, turn);
      if (!reopened.successful) {
        await lease.release();
        return reopened;
      }
      turn = reopened.result;
      round = turn.rounds[index];
      session.openTurnId = turn.turnId;
    }
    if (turn && round?.result) {
      await lease.release();
      return storedAnswer(turn, index, round.result);
    }
    if (!turn || !round || turn.status !== "running" || session.openTurnId !== turn.turnId) {
      await lease.release();
      return stillAnswering();
    }
    const context = this.#catalog.conversationContext(session.conversationContextId);
    const restart = restartOf(turn, round);
    if (!context || !restart) {
      const failure = context ? interruptedFailure(turn.turnId) : contextGone(session);
      return ok({ type: "settle_failure", round: index, lease, turn, failure });
    }
    const calls = await this.#persistence.listLlmCalls(lease.key, turn.turnId);
    const llmCallCount = Math.max(turn.llmCallCount, (calls.at(-1)?.index ?? -1) + 1);
    session.cursor = restart.cursor;
    return ok({
      type: "run_round",
      round: index,
      lease,
      session,
      turn: { ...turn, llmCallCount },
      context,
      opening: restart.opening,
      warnings: restart.opening.type === "user_turn" ? contextKept(restart.opening.request, context) : [],
      rerun: true,
    });
  }
}

/**
 * Whether round `index` is the last round of a turn failed with TURN_INTERRUPTED while it ran: the instance
 * running it stopped, and the reaper (or a newer turn) failed it. Its client never saw that answer, so the
 * same request sent again runs the round again, unless the session moved on (see `#nothingFollows`).
 */
function isReapedRound(turn: TurnRecord, index: number): boolean {
  return (
    turn.status === "failed" &&
    index === turn.rounds.length - 1 &&
    turn.error?.code === "TURN_INTERRUPTED" &&
    turn.rounds[index]?.result?.successful === false
  );
}

/** Runs `work`, giving `lease` back when it throws: a request that fails unexpectedly leaves the session free. */
async function releasingOnThrow<T>(lease: SessionLease, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await lease.release();
    throw error;
  }
}

/** A started user turn's round, ready to run. */
function userTurnRound(
  input: Omit<RunningRound, "round" | "opening"> & { request: UserTurnRequest },
): InvokeResult<Admission> {
  const { request, ...round } = input;
  return ok({ type: "run_round", round: 0, ...round, opening: { type: "user_turn", request } });
}

/** A resumed continuation's round, ready to run: the client's results open it. */
function continuationRound(input: {
  lease: SessionLease;
  session: SessionRecord;
  turn: TurnRecord;
  context: ConversationContext;
  request: ToolContinuationRequest;
  pending: PendingToolCalls;
}): RunningRound & { type: "run_round" } {
  const { request, pending, turn, ...rest } = input;
  return {
    type: "run_round",
    round: turn.rounds.length - 1,
    turn,
    ...rest,
    opening: { type: "tool_results", toolResults: request.toolResults, pending },
    warnings: [],
  };
}

/**
 * What resuming an awaiting turn with `request` writes: its pending calls, kept with the cursor the round
 * starts from (so it can run again if interrupted), and the request as the turn's next round.
 */
function resumedRounds(
  session: SessionRecord,
  turn: TurnRecord,
  pending: PendingToolCalls,
  request: ToolContinuationRequest,
  hash: string,
): { pending: PendingToolCalls; rounds: TurnRound[] } {
  return {
    pending: { ...pending, continueCursor: session.cursor },
    rounds: [...turn.rounds, { request, requestHash: hash }],
  };
}

/** A user turn's running turn, and what its session changes with its start. */
function turnStart(input: {
  session: SessionRecord;
  request: UserTurnRequest;
  hash: string;
  mode: string;
  cursor: ConversationCursor;
  now: Date;
}): TurnStart {
  const { session, request, hash, mode, cursor, now } = input;
  const solutionContextText =
    request.solutionContextText === undefined
      ? session.solutionContextText
      : request.solutionContextText || null;
  const turn: TurnRecord = {
    principal: session.principal,
    sessionId: session.sessionId,
    turnId: request.turnId,
    sequence: session.turnCount + 1,
    status: "running",
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
  return { turn, sessionPatch: { openTurnId: turn.turnId, solutionContextText, cursor, mode } };
}

/** A round sent again after it was answered: its stored answer. */
function storedAnswer(
  turn: TurnRecord,
  round: number,
  result: InvokeResult<AgentExecuteResponse>,
): InvokeResult<Admission> {
  return ok({ type: "stored_answer", round, result, stream: turn.stream });
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

/** A continuation already applied to the turn (its later rounds), found by its body's hash. */
function answeredContinuation(turn: TurnRecord, hash: string): TurnRound | undefined {
  return turn.rounds.slice(1).find((round) => round.requestHash === hash);
}
