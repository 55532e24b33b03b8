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
import { randomIdGenerator } from "../defaults/random-id-generator.js";
import { sha256ContentHashService } from "../defaults/sha256-content-hash-service.js";
import { systemClock } from "../defaults/system-clock.js";
import { requestHash } from "../lifecycle/request-hash.js";
import { toolResultsMismatch } from "../lifecycle/tool-results-mismatch.js";
import { InMemoryTurnEventLog } from "../memory/in-memory-turn-event-log.js";
import type { ConversationCursor } from "../model/conversation-cursor.js";
import type { SessionKey, SessionRecord } from "../model/session-record.js";
import { resultEvent, type TurnEvent } from "../model/turn-event.js";
import type { TurnRecord, TurnRound } from "../model/turn-record.js";
import type { Clock } from "../ports/clock.js";
import type { ContentHashService } from "../ports/content-hash-service.js";
import type { ContextRetriever } from "../ports/context-retriever.js";
import type { FileStore, StoredFile } from "../ports/file-store.js";
import type { IdGenerator } from "../ports/id-generator.js";
import type { LlmProvider } from "../ports/llm-provider.js";
import type { SessionStore } from "../ports/session-store.js";
import { isStoreUnavailable } from "../ports/store-unavailable-error.js";
import type { TurnEventLog } from "../ports/turn-event-log.js";
import { CompositionStep } from "./composition/composition-step.js";
import type { RoundOpening } from "./composition/round-opening.js";
import { FileKeeper } from "./file-keeper.js";
import { LlmCallStep } from "./llm-call-step.js";
import { ReasonerStep } from "./reasoner-step.js";
import { ServerToolExecutionStep } from "./server-tool-execution-step.js";
import { TurnEventQueue } from "./turn-event-queue.js";
import { TurnEventRecorder } from "./turn-event-recorder.js";
import { TurnFollower } from "./turn-follower.js";
import { type SessionLease, TurnPersistence } from "./turn-persistence.js";
import { NO_USAGE, type TurnProgress } from "./turn-progress.js";
import { emptyProgress, interruptedFailure, TurnSettlement } from "./turn-settlement.js";
import { TurnWakeups } from "./turn-wakeups.js";
import { type SessionSummary, summarizeSession, type TurnTrace, traceTurn } from "./views.js";

export interface AgentServiceOptions {
  catalog: AgentCatalog;
  /** One per `ConversationContext.provider` id. */
  providers: readonly LlmProvider[];
  store: SessionStore;
  files: FileStore;
  retriever?: ContextRetriever;
  clock?: Clock;
  ids?: IdGenerator;
  hashing?: ContentHashService;
  /** LLM calls one request may make before its turn fails with ITERATION_LIMIT_EXCEEDED. */
  maxLlmCallsPerRequest?: number;
  /** How long a turn holds its session before another instance may take over (renewed on every LLM call). */
  leaseMs?: number;
  /** How long the stream events of a turn are kept after it ends (`pruneTurnEvents`). Default 24 h. */
  eventRetentionMs?: number;
  /** Where streamed text deltas are kept for clients that reconnect; in memory when absent. */
  events?: TurnEventLog;
  /** How often buffered deltas are written to the event log. Default 100 ms. */
  eventFlushMs?: number;
  /** How often a follower of a turn run elsewhere checks for news. Default 250 ms. */
  followPollMs?: number;
}

export interface ExecuteOptions {
  /**
   * Streams the answer: `output_text.delta` events as the provider's text arrives (every LLM call of the
   * round, server tool iterations included), then exactly one `result` event holding what `execute` returns.
   * A request refused before its turn runs (SESSION_BUSY, TURN_ID_CONFLICT, …) gets no events: it is not a
   * round of the turn, so an event id would name a round it does not belong to.
   */
  onEvent?: (event: TurnEvent) => void;
}

/** The streaming state of one request: where its events go and which round they belong to. */
interface Streaming {
  onEvent: (event: TurnEvent) => void;
  round: number;
}

/** A request let into its turn: the round it answers, and how to answer it (again, when already answered). */
interface Admitted {
  round: number;
  answer(streaming: Streaming | undefined): Promise<InvokeResult<AgentExecuteResponse>>;
}

export const DEFAULT_MAX_LLM_CALLS_PER_REQUEST = 12;
export const DEFAULT_LEASE_MS = 10 * 60_000;
export const DEFAULT_EVENT_RETENTION_MS = 24 * 3_600_000;
/** Turns `pruneTurnEvents` prunes per store call, and calls it makes at most per run. */
const PRUNE_BATCH = 100;
const MAX_PRUNE_BATCHES = 10;

interface Round {
  lease: SessionLease;
  session: SessionRecord;
  turn: TurnRecord;
  context: ConversationContext;
  opening: RoundOpening;
  warnings: InvokeWarning[];
  streaming: Streaming | undefined;
  /** The round runs again after its instance stopped: its streamed events follow the earlier attempt's. */
  rerun?: boolean;
}

/**
 * Layer 6 — Entry (AGN-027 G), with the turn lifecycle (docs/architecture.md): one `execute(request, principal)`
 * for both request scenarios, plus the owner-only reads the server's routes answer. It admits a request to
 * its turn and hands the Reasoner what the request carries; Composition makes prompts of it.
 */
export class AgentService {
  readonly #catalog: AgentCatalog;
  readonly #providers: Map<string, LlmProvider>;
  readonly #persistence: TurnPersistence;
  readonly #settlement: TurnSettlement;
  readonly #follower: TurnFollower;
  readonly #files: FileStore;
  readonly #clock: Clock;
  readonly #hashing: ContentHashService;
  readonly #reasoner: ReasonerStep;
  readonly #events: TurnEventLog;
  readonly #wakeups = new TurnWakeups();
  readonly #eventFlushMs: number;
  readonly #eventRetentionMs: number;

  constructor(options: AgentServiceOptions) {
    this.#catalog = options.catalog;
    this.#providers = new Map(options.providers.map((provider) => [provider.id, provider]));
    this.#clock = options.clock ?? systemClock;
    this.#hashing = options.hashing ?? sha256ContentHashService;
    const ids = options.ids ?? randomIdGenerator;
    this.#persistence = new TurnPersistence(
      options.store,
      this.#clock,
      ids,
      options.leaseMs ?? DEFAULT_LEASE_MS,
    );
    this.#settlement = new TurnSettlement(options.catalog.modes, this.#clock);
    this.#files = options.files;
    this.#events = options.events ?? new InMemoryTurnEventLog(options.store);
    this.#eventFlushMs = options.eventFlushMs ?? 100;
    this.#eventRetentionMs = options.eventRetentionMs ?? DEFAULT_EVENT_RETENTION_MS;
    this.#follower = new TurnFollower(
      this.#persistence,
      this.#events,
      this.#wakeups,
      options.followPollMs ?? 250,
    );
    this.#reasoner = new ReasonerStep({
      composition: new CompositionStep(options.catalog, options.retriever),
      llmCall: new LlmCallStep(),
      serverTools: new ServerToolExecutionStep(options.catalog.serverTools, this.#clock),
      files: new FileKeeper(options.files, this.#hashing, ids, this.#clock),
      clock: this.#clock,
      modes: options.catalog.modes,
      maxLlmCalls: options.maxLlmCallsPerRequest ?? DEFAULT_MAX_LLM_CALLS_PER_REQUEST,
    });
  }

  /** Runs a user turn or applies a tool continuation. `request` must already be valid (see @aptix/contracts). */
  async execute(
    request: AgentExecuteRequest,
    principal: string,
    options: ExecuteOptions = {},
  ): Promise<InvokeResult<AgentExecuteResponse>> {
    const key = { principal, sessionId: request.sessionId };
    const admitted = await this.#admit(key, request);
    if (!admitted.successful) return admitted;
    return this.#answer(key, request.turnId, admitted.result, options.onEvent);
  }

  /**
   * `execute` for a caller that answers differently before and after the turn runs (an HTTP route that opens
   * its event stream only then): a request refused before its turn runs answers its failure here, otherwise
   * the round's events, ending with its `result` event. The round runs to its end whether or not they are read.
   */
  async stream(
    request: AgentExecuteRequest,
    principal: string,
  ): Promise<InvokeResult<AsyncIterable<TurnEvent>>> {
    const key = { principal, sessionId: request.sessionId };
    const admitted = await this.#admit(key, request);
    if (!admitted.successful) return admitted;
    const events = new TurnEventQueue();
    this.#answer(key, request.turnId, admitted.result, (event) => events.push(event)).then(
      () => events.end(),
      (error: unknown) => events.end({ error }),
    );
    return ok(events);
  }

  async #answer(
    key: SessionKey,
    turnId: string,
    admitted: Admitted,
    onEvent: ((event: TurnEvent) => void) | undefined,
  ): Promise<InvokeResult<AgentExecuteResponse>> {
    const streaming = onEvent && { onEvent, round: admitted.round };
    const result = await admitted.answer(streaming);
    streaming?.onEvent(resultEvent(streaming.round, result));
    this.#wakeups.notify(key, turnId);
    return result;
  }

  #admit(key: SessionKey, request: AgentExecuteRequest): Promise<InvokeResult<Admitted>> {
    const hash = requestHash(request, this.#hashing);
    return isToolContinuationRequest(request)
      ? this.#admitContinuation(key, request, hash)
      : this.#admitUserTurn(key, request, hash);
  }

  /** Whether the answer to this request streams: a continuation streams when its user turn asked to (AGN-034 §2.2). */
  async streamsAnswer(request: AgentExecuteRequest, principal: string): Promise<boolean> {
    if (!isToolContinuationRequest(request)) return request.stream === true;
    const turn = await this.#persistence.getTurn({ principal, sessionId: request.sessionId }, request.turnId);
    return turn?.stream ?? false;
  }

  /**
   * The events of a turn after `lastEventId`, then live until its latest round has its result, which always
   * ends them (see TurnFollower.resume): for a client that dropped off a stream. Works from any instance;
   * stops early once `signal` aborts.
   */
  async followTurn(
    principal: string,
    sessionId: string,
    turnId: string,
    lastEventId?: string,
    signal?: AbortSignal,
  ): Promise<InvokeResult<AsyncIterable<TurnEvent>>> {
    const key = { principal, sessionId };
    const turn = await this.#persistence.getTurn(key, turnId);
    if (!turn) return this.#turnNotFound(key, turnId);
    return this.#follower.resume(key, turn, lastEventId, signal);
  }

  async #admitUserTurn(
    key: SessionKey,
    request: UserTurnRequest,
    hash: string,
  ): Promise<InvokeResult<Admitted>> {
    const existing = await this.#persistence.getTurn(key, request.turnId);
    if (existing) {
      const first = existing.rounds[0];
      if (first?.requestHash !== hash) return turnIdConflict(request.turnId);
      return first.result ? storedAnswer(0, first.result) : this.#admitRetry(key, request.turnId, 0);
    }
    const requested = this.#catalog.conversationContext(request.conversationContextId);
    if (!requested) {
      return fail("VALIDATION_FAILED", "conversationContextId names no configured conversation context.", {
        fields: [{ path: "conversationContextId", message: "names no configured conversation context" }],
      });
    }
    const claimed = await this.#persistence.claim(key, {
      conversationContextId: requested.id,
      agentContextId: request.agentContextId ?? null,
      mode: this.#catalog.defaultModeOf(requested).id,
    });
    if (!claimed.successful) return claimed;
    const { session, lease } = claimed.result;
    return releasingOnThrow(lease, () => this.#beginTurn(lease, session, request, hash));
  }

  async #beginTurn(
    lease: SessionLease,
    session: SessionRecord,
    request: UserTurnRequest,
    hash: string,
  ): Promise<InvokeResult<Admitted>> {
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
    let mode = session.mode;
    if (!this.#catalog.modes.has(mode)) {
      mode = this.#catalog.defaultModeOf(context).id;
      warnings.push({
        code: "MODE_RESET",
        message: `Mode ${session.mode} is no longer configured; the session is back in ${mode}.`,
      });
      // Every transition gets its ModeHistory row (AGN-011 §5.7), this one too.
      const reset = await lease.changeMode({
        principal: session.principal,
        sessionId: session.sessionId,
        turnId: request.turnId,
        previousMode: session.mode,
        newMode: mode,
        reason: `Mode ${session.mode} is no longer configured.`,
        changedBy: session.principal,
        changedAt: now,
      });
      if (!reset.successful) {
        await lease.release();
        return reset;
      }
    }

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
    const started = await lease.startTurn(
      turn,
      { openTurnId: turn.turnId, solutionContextText, cursor, mode },
      abandonTurnId,
    );
    if (!started.successful) {
      // The turn was started (and ended) by a request racing this one after its first read: judged by the
      // request's hash like any turn sent again.
      if (started.errors[0].code === "TURN_ID_CONFLICT") {
        return this.#userTurnSentAgain(lease, session, turn.turnId, hash);
      }
      await lease.release();
      return started;
    }
    Object.assign(session, { openTurnId: turn.turnId, solutionContextText, cursor, mode });
    return ok({
      round: 0,
      answer: (streaming) =>
        this.#runRound({
          lease,
          session,
          turn,
          context,
          opening: { type: "user_turn", request },
          warnings,
          streaming,
        }),
    });
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
  ): Promise<InvokeResult<Admitted>> {
    const turn = await this.#persistence.getTurn(lease.key, turnId);
    if (turn?.rounds[0]?.requestHash !== hash) {
      await lease.release();
      return turnIdConflict(turnId);
    }
    return this.#rerun(lease, session, turnId, 0);
  }

  async #admitContinuation(
    key: SessionKey,
    request: ToolContinuationRequest,
    hash: string,
  ): Promise<InvokeResult<Admitted>> {
    const known = await this.#persistence.getTurn(key, request.turnId);
    if (!known) return this.#turnNotFound(key, request.turnId);
    const answered = answeredContinuation(known, hash);
    if (answered) {
      const index = known.rounds.indexOf(answered);
      return answered.result
        ? storedAnswer(index, answered.result)
        : this.#admitRetry(key, known.turnId, index);
    }
    if (known.status !== "awaiting_client_tools") return notAwaiting(known);

    const claimed = await this.#persistence.claim(key);
    if (!claimed.successful) return claimed;
    const { session, lease } = claimed.result;
    try {
      // Re-read under the lease: another instance may have moved the turn on since the first read.
      const turn = await this.#persistence.getTurn(key, request.turnId);
      if (!turn?.pending || turn.status !== "awaiting_client_tools") {
        const nowAnswered = turn && answeredContinuation(turn, hash);
        // Sent again while this request waited: answered meanwhile, or interrupted since (run it again).
        if (nowAnswered)
          return await this.#rerun(lease, session, turn.turnId, turn.rounds.indexOf(nowAnswered));
        await lease.release();
        return notAwaiting(turn ?? known);
      }
      // Kept while the round runs, with the cursor it starts from, so it can be run again if interrupted.
      const pending = { ...turn.pending, continueCursor: session.cursor };
      // The request is the turn's next round from here on: even a mismatch is stored as that round's result.
      const rounds: TurnRound[] = [...turn.rounds, { request, requestHash: hash }];
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
        return ok({
          round,
          answer: () => this.#settlement.failure(lease, { ...turn, rounds }, emptyProgress(turn), failure),
        });
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
        const failure = contextGone(session);
        return ok({
          round,
          answer: () => this.#settlement.failure(lease, { ...turn, rounds }, emptyProgress(turn), failure),
        });
      }
      return ok({
        round,
        answer: (streaming) =>
          this.#runRound({
            lease,
            session,
            turn: { ...turn, status: "running", pending, rounds },
            context,
            opening: { type: "tool_results", toolResults: request.toolResults, pending },
            warnings: [],
            streaming,
          }),
      });
    } catch (error) {
      await lease.release();
      throw error;
    }
  }

  /**
   * A round sent again before it has its answer. While the instance running it holds the session's lease, it
   * is still being answered (SESSION_BUSY, retryable). Once that lease has expired, that instance stopped:
   * this request takes the session over and runs the round again.
   */
  async #admitRetry(key: SessionKey, turnId: string, index: number): Promise<InvokeResult<Admitted>> {
    const claimed = await this.#persistence.claim(key);
    if (!claimed.successful) return claimed.errors[0].code === "SESSION_BUSY" ? stillAnswering() : claimed;
    const { session, lease } = claimed.result;
    return releasingOnThrow(lease, () => this.#rerun(lease, session, turnId, index));
  }

  /**
   * Runs round `index` of a turn left running again, under `lease`, from its last durable point: the cursor
   * the round started from (the turn's for a user turn, the one kept with the pending calls for a
   * continuation). The round has no stored answer, so the client sees nothing twice; the earlier attempt's
   * LLM calls stay in the trace. A round answered meanwhile answers as stored.
   */
  async #rerun(
    lease: SessionLease,
    session: SessionRecord,
    turnId: string,
    index: number,
  ): Promise<InvokeResult<Admitted>> {
    // Re-read under the lease: the round may have been answered, or its turn failed, since the first read.
    const turn = await this.#persistence.getTurn(lease.key, turnId);
    const round = turn?.rounds[index];
    if (round?.result) {
      await lease.release();
      return storedAnswer(index, round.result);
    }
    if (!turn || !round || turn.status !== "running" || session.openTurnId !== turnId) {
      await lease.release();
      return stillAnswering();
    }
    const context = this.#catalog.conversationContext(session.conversationContextId);
    const restart = restartOf(turn, round);
    if (!context || !restart) {
      const failure = context ? interruptedFailure(turnId) : contextGone(session);
      return ok({
        round: index,
        answer: () => this.#settlement.failure(lease, turn, emptyProgress(turn), failure),
      });
    }
    const calls = await this.#persistence.listLlmCalls(lease.key, turnId);
    const llmCallCount = Math.max(turn.llmCallCount, (calls.at(-1)?.index ?? -1) + 1);
    session.cursor = restart.cursor;
    return ok({
      round: index,
      answer: (streaming) =>
        this.#runRound({
          lease,
          session,
          turn: { ...turn, llmCallCount },
          context,
          opening: restart.opening,
          warnings: restart.opening.type === "user_turn" ? contextKept(restart.opening.request, context) : [],
          streaming,
          rerun: true,
        }),
    });
  }

  /** Runs one round of the turn; whatever it throws fails the turn (never the session) instead of escaping. */
  async #runRound(round: Round): Promise<InvokeResult<AgentExecuteResponse>> {
    try {
      return await this.#reason(round);
    } catch (error) {
      const failure = isStoreUnavailable(error)
        ? fail(
            "NOT_READY",
            "The database could not be reached while the turn ran; the turn failed. Send it again as a new turn once the service is ready.",
            { turnId: round.turn.turnId, retryable: true },
          )
        : fail(
            "INTERNAL",
            `The turn failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`,
          );
      try {
        return await this.#settlement.failure(round.lease, round.turn, emptyProgress(round.turn), failure);
      } catch (settling) {
        if (!isStoreUnavailable(settling)) throw settling;
        // The failure could not be stored either: the turn stays running until its lease lapses (freed here if
        // the database is back already), and the round sent again then runs again (#rerun).
        await round.lease.release().catch(() => undefined);
        return fail(
          "NOT_READY",
          "The database cannot be reached; send the request again once the service is ready.",
          {
            retryable: true,
          },
        );
      }
    }
  }

  async #reason(round: Round): Promise<InvokeResult<AgentExecuteResponse>> {
    const { lease, session, turn, context } = round;
    const progress: TurnProgress = {
      cursor: session.cursor,
      usage: turn.usage,
      llmCallCount: turn.llmCallCount,
      toolExecutions: [...turn.toolExecutions],
      files: [...turn.files],
      warnings: round.warnings,
    };
    const provider = this.#providers.get(context.provider);
    if (!provider) {
      const failure = fail(
        "INTERNAL",
        `No LLM provider ${JSON.stringify(context.provider)} is configured for conversation context ${context.id}.`,
      );
      return this.#settlement.failure(lease, turn, progress, failure);
    }
    const recorder = round.streaming && (await this.#recorderFor(turn, round.streaming, round.rerun));
    const outcome = await this.#reasoner.run({
      lease,
      provider,
      context,
      mode: this.#catalog.modes.get(turn.mode),
      session,
      turnId: turn.turnId,
      opening: round.opening,
      progress,
      ...(recorder ? { text: recorder } : {}),
    });
    // Every delta is in the log before the round's result is visible to followers.
    await recorder?.flush();
    if (!outcome.successful) return this.#settlement.failure(lease, turn, progress, outcome);
    return this.#settlement.success(lease, session, turn, progress, outcome.result);
  }

  async #recorderFor(turn: TurnRecord, streaming: Streaming, rerun = false): Promise<TurnEventRecorder> {
    // A round run again numbers its deltas after the earlier attempt's, so an event id names one event.
    const earlier = rerun ? await this.#events.list(turn, turn.turnId, streaming.round, -1) : [];
    const recorder = new TurnEventRecorder({
      log: this.#events,
      wakeups: this.#wakeups,
      key: turn,
      turnId: turn.turnId,
      round: streaming.round,
      onEvent: streaming.onEvent,
      flushMs: this.#eventFlushMs,
      firstSeq: (earlier.at(-1)?.seq ?? -1) + 1,
    });
    // What the earlier attempt streamed is not the answer: clients drop it before the new attempt's text.
    if (rerun) recorder.reset();
    return recorder;
  }

  async #turnNotFound(key: SessionKey, turnId: string): Promise<InvokeFailure> {
    return (await this.#persistence.getSession(key))
      ? fail("TURN_NOT_FOUND", `No turn ${JSON.stringify(turnId)} in this session.`, { turnId })
      : fail("SESSION_NOT_FOUND", `No session ${JSON.stringify(key.sessionId)}.`, {
          sessionId: key.sessionId,
        });
  }

  /**
   * Fails turns left running by stopped instances (TURN_INTERRUPTED) once their lease has been expired for
   * `expiredForMs` by the store's clock, so their sessions show the truth without waiting for the next
   * request; until then the client may still send the round again to have it run again. Returns how many it
   * failed.
   */
  async failExpiredTurns(options: { expiredForMs?: number; limit?: number } = {}): Promise<number> {
    const { expiredForMs = 0, limit = 100 } = options;
    let failedCount = 0;
    for (const key of await this.#persistence.findExpiredLeases({ expiredForMs, limit })) {
      const claimed = await this.#persistence.claim(key);
      if (!claimed.successful) continue;
      const { session, lease } = claimed.result;
      const open =
        session.openTurnId === null ? undefined : await this.#persistence.getTurn(key, session.openTurnId);
      if (open?.status === "running" && (await this.#settlement.interrupted(lease, open)).successful) {
        failedCount++;
      }
      await lease.release();
    }
    return failedCount;
  }

  /**
   * Deletes the stream events of turns that ended more than `eventRetentionMs` ago (by this service's clock,
   * which stamps turns' `completedAt`): a stream resumed later gets the rounds' results only. Returns how
   * many turns' events it deleted.
   */
  async pruneTurnEvents(): Promise<number> {
    const endedBefore = new Date(this.#clock.now().getTime() - this.#eventRetentionMs);
    let pruned = 0;
    for (let batch = 0; batch < MAX_PRUNE_BATCHES; batch++) {
      const count = await this.#events.prune({ endedBefore, limit: PRUNE_BATCH });
      pruned += count;
      if (count < PRUNE_BATCH) break;
    }
    return pruned;
  }

  async getSession(principal: string, sessionId: string): Promise<InvokeResult<SessionSummary>> {
    const key = { principal, sessionId };
    const session = await this.#persistence.getSession(key);
    if (!session) return fail("SESSION_NOT_FOUND", `No session ${JSON.stringify(sessionId)}.`, { sessionId });
    const [turns, history] = await Promise.all([
      this.#persistence.listTurns(key),
      this.#persistence.listModeHistory(key),
    ]);
    return ok(
      summarizeSession(session, turns, history, (id) =>
        this.#catalog.modes.has(id) ? this.#catalog.modes.get(id).displayName : id,
      ),
    );
  }

  async getTurnTrace(principal: string, sessionId: string, turnId: string): Promise<InvokeResult<TurnTrace>> {
    const key = { principal, sessionId };
    const turn = await this.#persistence.getTurn(key, turnId);
    if (!turn) return this.#turnNotFound(key, turnId);
    return ok(traceTurn(turn, await this.#persistence.listLlmCalls(key, turnId)));
  }

  async getFile(
    principal: string,
    fileId: string,
  ): Promise<InvokeResult<{ file: StoredFile; content: Uint8Array }>> {
    const found = await this.#files.get(principal, fileId);
    return found ? ok(found) : fail("FILE_NOT_FOUND", `No file ${JSON.stringify(fileId)}.`, { fileId });
  }
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

/** A round sent again after it was answered: its stored answer. */
function storedAnswer(index: number, result: InvokeResult<AgentExecuteResponse>): InvokeResult<Admitted> {
  return ok({ round: index, answer: async () => result });
}

/** A user turn whose turnId the session already has for a different body. */
function turnIdConflict(turnId: string): InvokeFailure {
  return fail("TURN_ID_CONFLICT", `Turn ${JSON.stringify(turnId)} was already sent with a different body.`, {
    turnId,
  });
}

/** A round sent again while the instance running it still holds the session's lease. */
function stillAnswering(): InvokeFailure {
  return fail("SESSION_BUSY", "This request is still being answered; retry when it has finished.", {
    retryable: true,
  });
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

function contextGone(session: SessionRecord): InvokeFailure {
  return fail(
    "INTERNAL",
    `The session's conversation context ${session.conversationContextId} is no longer configured.`,
  );
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

function notAwaiting(turn: TurnRecord): InvokeFailure {
  return fail(
    "TURN_NOT_AWAITING_TOOLS",
    `Turn ${JSON.stringify(turn.turnId)} is ${turn.status}, not awaiting client tools.`,
    {
      turnId: turn.turnId,
      status: turn.status,
    },
  );
}
