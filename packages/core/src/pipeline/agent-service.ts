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
import type { SessionKey, SessionRecord } from "../model/session-record.js";
import { parseEventId, resultEvent, type TurnEvent } from "../model/turn-event.js";
import type { TurnRecord, TurnRound } from "../model/turn-record.js";
import type { Clock } from "../ports/clock.js";
import type { ContentHashService } from "../ports/content-hash-service.js";
import type { ContextRetriever } from "../ports/context-retriever.js";
import type { FileStore, StoredFile } from "../ports/file-store.js";
import type { IdGenerator } from "../ports/id-generator.js";
import type { LlmProvider } from "../ports/llm-provider.js";
import type { SessionStore } from "../ports/session-store.js";
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
import { emptyProgress, TurnSettlement } from "./turn-settlement.js";
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

interface Round {
  lease: SessionLease;
  session: SessionRecord;
  turn: TurnRecord;
  context: ConversationContext;
  opening: RoundOpening;
  warnings: InvokeWarning[];
  streaming: Streaming | undefined;
}

/**
 * Layer 6 — Entry (AGN-027 G), with the turn lifecycle of docs/architecture.md: one `execute(request, principal)`
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
    this.#events = options.events ?? new InMemoryTurnEventLog();
    this.#eventFlushMs = options.eventFlushMs ?? 100;
    this.#follower = new TurnFollower(
      this.#persistence,
      this.#events,
      this.#wakeups,
      options.followPollMs ?? 250,
    );
    this.#reasoner = new ReasonerStep(
      new CompositionStep(options.catalog, options.retriever),
      new LlmCallStep(),
      new ServerToolExecutionStep(options.catalog.serverTools, this.#clock),
      new FileKeeper(options.files, this.#hashing, ids, this.#clock),
      this.#clock,
      options.maxLlmCallsPerRequest ?? DEFAULT_MAX_LLM_CALLS_PER_REQUEST,
    );
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
   * The events of a turn after `lastEventId`, then live until its latest round has its result: for a client
   * that dropped off a stream. Works from any instance; stops early once `signal` aborts.
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
    const position = lastEventId === undefined ? undefined : parseEventId(lastEventId);
    if (lastEventId !== undefined && !position) {
      return fail("VALIDATION_FAILED", "Last-Event-ID is not an event id of this service.", {
        fields: [{ path: "Last-Event-ID", message: "is not an event id of this service" }],
      });
    }
    return ok(this.#follower.follow(key, turnId, position, signal));
  }

  async #admitUserTurn(
    key: SessionKey,
    request: UserTurnRequest,
    hash: string,
  ): Promise<InvokeResult<Admitted>> {
    const existing = await this.#persistence.getTurn(key, request.turnId);
    if (existing) {
      const first = existing.rounds[0];
      if (first?.requestHash !== hash) {
        return fail(
          "TURN_ID_CONFLICT",
          `Turn ${JSON.stringify(request.turnId)} was already sent with a different body.`,
          {
            turnId: request.turnId,
          },
        );
      }
      return storedAnswer(0, first);
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
    try {
      return await this.#beginTurn(lease, session, request, hash);
    } catch (error) {
      await lease.release();
      throw error;
    }
  }

  async #beginTurn(
    lease: SessionLease,
    session: SessionRecord,
    request: UserTurnRequest,
    hash: string,
  ): Promise<InvokeResult<Admitted>> {
    const now = this.#clock.now();
    const warnings: InvokeWarning[] = [];
    const context = this.#catalog.conversationContext(session.conversationContextId);
    if (!context) {
      await lease.release();
      return fail(
        "INTERNAL",
        `The session's conversation context ${session.conversationContextId} is no longer configured.`,
      );
    }
    if (request.conversationContextId !== undefined && request.conversationContextId !== context.id) {
      warnings.push({
        code: "CONVERSATION_CONTEXT_KEPT",
        message: `The session keeps its conversation context ${JSON.stringify(context.id)}; conversationContextId applies to new sessions only.`,
      });
    }
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
    // by an instance whose lease expired (it crashed: fail it). Either way the provider's view rolls back.
    let cursor = session.cursor;
    let abandonTurnId: string | undefined;
    if (session.openTurnId !== null) {
      const open = await this.#persistence.getTurn(session, session.openTurnId);
      if (open?.status === "awaiting_client_tools" && open.pending) {
        abandonTurnId = open.turnId;
        cursor = open.pending.resumeCursor;
      } else if (open?.status === "running") {
        const failed = await this.#settlement.abandonedRun(lease, open);
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

  async #admitContinuation(
    key: SessionKey,
    request: ToolContinuationRequest,
    hash: string,
  ): Promise<InvokeResult<Admitted>> {
    const known = await this.#persistence.getTurn(key, request.turnId);
    if (!known) return this.#turnNotFound(key, request.turnId);
    const answered = answeredContinuation(known, hash);
    if (answered) return storedAnswer(known.rounds.indexOf(answered), answered);
    if (known.status !== "awaiting_client_tools") return notAwaiting(known);

    const claimed = await this.#persistence.claim(key);
    if (!claimed.successful) return claimed;
    const { session, lease } = claimed.result;
    try {
      // Re-read under the lease: another instance may have moved the turn on since the first read.
      const turn = await this.#persistence.getTurn(key, request.turnId);
      if (!turn?.pending || turn.status !== "awaiting_client_tools") {
        await lease.release();
        const nowAnswered = turn && answeredContinuation(turn, hash);
        return nowAnswered
          ? storedAnswer(turn.rounds.indexOf(nowAnswered), nowAnswered)
          : notAwaiting(turn ?? known);
      }
      const pending = turn.pending;
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
        { status: "running", pending: null, rounds },
        { expectStatus: "awaiting_client_tools" },
      );
      if (!resumed.successful) {
        await lease.release();
        return resumed;
      }
      const context = this.#catalog.conversationContext(session.conversationContextId);
      if (!context) {
        const failure = fail(
          "INTERNAL",
          `The session's conversation context ${session.conversationContextId} is no longer configured.`,
        );
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
            turn: { ...turn, status: "running", pending: null, rounds },
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

  /** Runs one round of the turn; whatever it throws fails the turn (never the session) instead of escaping. */
  async #runRound(round: Round): Promise<InvokeResult<AgentExecuteResponse>> {
    try {
      return await this.#reason(round);
    } catch (error) {
      const failure = fail(
        "INTERNAL",
        `The turn failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`,
      );
      return this.#settlement.failure(round.lease, round.turn, emptyProgress(round.turn), failure);
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
    const recorder = round.streaming && this.#recorderFor(turn, round.streaming);
    const outcome = await this.#reasoner.run({
      lease,
      provider,
      context,
      mode: this.#catalog.modes.get(turn.mode),
      session,
      turnId: turn.turnId,
      opening: round.opening,
      progress,
      ...(recorder ? { onTextDelta: (delta: string) => recorder.delta(delta) } : {}),
    });
    // Every delta is in the log before the round's result is visible to followers.
    await recorder?.flush();
    if (!outcome.successful) return this.#settlement.failure(lease, turn, progress, outcome);
    return this.#settlement.success(lease, session, turn, progress, outcome.result);
  }

  #recorderFor(turn: TurnRecord, streaming: Streaming): TurnEventRecorder {
    return new TurnEventRecorder(
      this.#events,
      this.#wakeups,
      turn,
      turn.turnId,
      streaming.round,
      streaming.onEvent,
      this.#eventFlushMs,
    );
  }

  async #turnNotFound(key: SessionKey, turnId: string): Promise<InvokeFailure> {
    return (await this.#persistence.getSession(key))
      ? fail("TURN_NOT_FOUND", `No turn ${JSON.stringify(turnId)} in this session.`, { turnId })
      : fail("SESSION_NOT_FOUND", `No session ${JSON.stringify(key.sessionId)}.`, {
          sessionId: key.sessionId,
        });
  }

  /**
   * Fails turns left running by crashed instances once their lease has expired, so their sessions show
   * the truth without waiting for the next turn. Returns how many it failed.
   */
  async failExpiredTurns(limit = 100): Promise<number> {
    let failedCount = 0;
    for (const key of await this.#persistence.findExpiredLeases(this.#clock.now(), limit)) {
      const claimed = await this.#persistence.claim(key);
      if (!claimed.successful) continue;
      const { session, lease } = claimed.result;
      const open =
        session.openTurnId === null ? undefined : await this.#persistence.getTurn(key, session.openTurnId);
      if (open?.status === "running" && (await this.#settlement.abandonedRun(lease, open)).successful) {
        failedCount++;
      }
      await lease.release();
    }
    return failedCount;
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

/** A round sent again: its stored answer, or SESSION_BUSY while it is still being answered. */
function storedAnswer(index: number, round: TurnRound): InvokeResult<Admitted> {
  const { result } = round;
  if (!result) {
    return fail("SESSION_BUSY", "This request is still being answered; retry when it has finished.", {
      retryable: true,
    });
  }
  return ok({ round: index, answer: async () => result });
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
