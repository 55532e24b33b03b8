import {
  type AgentExecuteRequest,
  type AgentExecuteResponse,
  type InvokeResult,
  isToolContinuationRequest,
  type ModeList,
  ok,
  type SessionCompacted,
  type SessionDeleted,
  type SessionList,
  type SessionMessages,
  type TurnAccepted,
  type TurnStateView,
  type TurnSummary,
  type UsageReport,
  type UserTurnRequest,
} from "@aptix/contracts";
import type { AgentCatalog } from "../catalog/agent-catalog.js";
import { CompositionStep } from "../composition/composition-step.js";
import { newCacheKeySecret } from "../composition/session-cache-key.js";
import { randomIdGenerator } from "../defaults/random-id-generator.js";
import { sha256ContentHashService } from "../defaults/sha256-content-hash-service.js";
import { systemClock } from "../defaults/system-clock.js";
import { InMemoryTurnEventLog } from "../in-memory/in-memory-turn-event-log.js";
import { storedProgress } from "../lifecycle/turn-endings.js";
import { LlmCallStep } from "../llm-call/llm-call-step.js";
import { TurnPersistence } from "../persistence/turn-persistence.js";
import { TurnSettlement } from "../persistence/turn-settlement.js";
import { WebhookEvents } from "../persistence/webhook-events.js";
import type { Clock } from "../ports/clock.js";
import type { ContentHashService } from "../ports/content-hash-service.js";
import type { ContextRetriever } from "../ports/context-retriever.js";
import type { FileStore, StoredFile } from "../ports/file-store.js";
import type { IdGenerator } from "../ports/id-generator.js";
import type { LlmProvider } from "../ports/llm-provider.js";
import type { SessionStores } from "../ports/session-stores.js";
import type { TurnEventLog } from "../ports/turn-event-log.js";
import { type TurnObserver, unobserved } from "../ports/turn-observer.js";
import { Compactor } from "../reasoner/compactor.js";
import { ReasonerStep } from "../reasoner/reasoner-step.js";
import type { SessionKey } from "../records/session-record.js";
import { parseEventId, resultEvent, storedAnswerEvents, type TurnEvent } from "../records/turn-event.js";
import type { TurnRecord } from "../records/turn-record.js";
import type { WebhookSubscription } from "../records/webhook-event.js";
import { FileKeeper, type FileKeeperOptions } from "../server-tools/file-keeper.js";
import { ServerToolExecutionStep } from "../server-tools/server-tool-execution-step.js";
import { TurnEventQueue } from "../streaming/turn-event-queue.js";
import { TurnFollower } from "../streaming/turn-follower.js";
import { TurnWakeups } from "../streaming/turn-wakeups.js";
import { Budgets, type BudgetsOptions } from "../usage/budgets.js";
import type { PriceTable } from "../usage/model-price.js";
import { PriceList } from "../usage/price-list.js";
import { type Spent, type TimeRange, type UsageReportQuery, UsageReports } from "../usage/usage-reports.js";
import { type Admission, TurnAdmission } from "./admission.js";
import { turnNotFound } from "./entry-failures.js";
import { Housekeeping } from "./housekeeping.js";
import { ReadModels } from "./read-models.js";
import { type EventSink, RoundRunner } from "./round-runner.js";
import { RunningRounds } from "./running-rounds.js";
import { SessionCompaction } from "./session-compaction.js";
import { SessionDeletion } from "./session-deletion.js";
import { SessionFork } from "./session-fork.js";
import { type PageRequest, SessionLists } from "./session-lists.js";
import { SessionRewind } from "./session-rewind.js";
import { type StoredResponseDeletionRun, StoredResponseDeletions } from "./stored-response-deletions.js";
import { TurnCancellation } from "./turn-cancellation.js";
import { type SessionSummary, type TurnTrace, turnStateView } from "./views.js";

export interface AgentServiceOptions {
  catalog: AgentCatalog;
  /** One per `ConversationContext.provider` id. */
  providers: readonly LlmProvider[];
  /** The session stores, one per domain (`inMemorySessionStores`, or a database's). */
  store: SessionStores;
  files: FileStore;
  /** Finds each user turn's `[CONTEXT]` chunks (`WorkspaceKnowledge`); without it no turn has the block. */
  retriever?: ContextRetriever;
  clock?: Clock;
  ids?: IdGenerator;
  hashing?: ContentHashService;
  /** LLM calls one request may make before its turn fails with ITERATION_LIMIT_EXCEEDED. */
  maxLlmCallsPerRequest?: number;
  /** The longest one server tool may run before its turn fails with TOOL_FAILED. Default 30 s. */
  toolTimeoutMs?: number;
  /**
   * How produced files are addressed, kept and bounded: `publicUrl`, `ttlSeconds`, `maxBytes`, `quotaBytes`
   * (see FileKeeper).
   */
  producedFiles?: Pick<FileKeeperOptions, "publicUrl" | "ttlSeconds" | "maxBytes" | "quotaBytes">;
  /** How long a turn holds its session before another instance may take over (renewed on every LLM call). */
  leaseMs?: number;
  /**
   * The most turns one principal may run at once, across every instance sharing the store: past it a user turn
   * or a tool continuation is refused RATE_LIMITED. Default 16.
   */
  maxRunningTurns?: number;
  /** How long the stream events of a turn are kept after it ends (`pruneTurnEvents`). Default 24 h. */
  eventRetentionMs?: number;
  /** Sessions idle longer than this are deleted (`sweepIdleSessions`); absent: kept. */
  sessionRetentionMs?: number;
  /** Traces older than this lose their composed requests and raw payloads (`pruneTraces`). Default 30 days. */
  traceRetentionMs?: number;
  /** Where streamed text deltas are kept for clients that reconnect; in memory when absent. */
  events?: TurnEventLog;
  /** How often buffered deltas are written to the event log. Default 100 ms. */
  eventFlushMs?: number;
  /**
   * How often a follower reads its turn again when no change was told (by this instance, or by another through
   * `TurnEventLog.listen`): a fallback, not how followers learn of news. Default 5 s.
   */
  followPollMs?: number;
  /**
   * How often the rounds running here read, in one query, whether their turns still run: how a cancel reaches a
   * round when no notification does (docs/security.md). Default 2 s.
   */
  cancelPollMs?: number;
  /** Watches rounds, LLM calls, server tool runs and retrievals (traces, metrics); none by default. */
  observer?: TurnObserver;
  /** Prices (`APTIX_CONFIG` `prices`) taken before the built-in table (`DEFAULT_PRICES`). */
  prices?: PriceTable;
  /**
   * The deployment's secret that keys each session's prompt-cache key (an HMAC of principal and session), the
   * same on every instance that serves the sessions. Default: random, this service's own.
   */
  cacheKeySecret?: Uint8Array;
  /**
   * Per-principal budgets: past one, a new user turn is refused BUDGET_EXCEEDED (nothing stored), a running turn
   * fails BUDGET_EXCEEDED before its next round, and a compaction asked for is refused. None when absent.
   */
  budgets?: BudgetsOptions;
  /**
   * The webhooks told of turns' ends, compactions and budget refusals: each event is written to the store's
   * outbox in the same step as what made it (`WebhookOutbox`); delivering it is the server's. None when absent.
   */
  webhooks?: readonly WebhookSubscription[];
}

export interface ExecuteOptions {
  /**
   * Streams the answer: `output_text.delta` events as the provider's text arrives (every LLM call of the
   * round, server tool iterations included), then exactly one `result` event holding what `execute` returns.
   * A request refused before its turn runs (SESSION_BUSY, TURN_ID_CONFLICT, …) gets no events: it is not a
   * round of the turn, so an event id would name a round it does not belong to.
   */
  onEvent?: EventSink;
}

/**
 * What `handle` answers a request with: its answer as one value, or, when the answer streams (a user turn
 * with `stream: true`, or a continuation of one) and its round runs, the round's events ending with its
 * `result` event. A request refused before its turn runs is always `answer`. `replayed` is true when the
 * request was sent before and its stored answer is given again, no model called (the HTTP header
 * `Idempotent-Replayed: true`).
 */
export type HandledRequest =
  | { type: "answer"; result: InvokeResult<AgentExecuteResponse>; replayed: boolean }
  /** A background turn (`background: true`), accepted: it runs (or waits in its queue) with no client. */
  | { type: "accepted"; accepted: TurnAccepted; replayed: boolean }
  | { type: "events"; events: AsyncIterable<TurnEvent>; replayed: boolean };

const DEFAULT_MAX_LLM_CALLS_PER_REQUEST = 12;
export const DEFAULT_LEASE_MS = 10 * 60_000;
export const DEFAULT_MAX_RUNNING_TURNS = 16;
export const DEFAULT_EVENT_RETENTION_MS = 24 * 3_600_000;
const DEFAULT_TRACE_RETENTION_MS = 30 * 24 * 3_600_000;
const DEFAULT_FOLLOW_POLL_MS = 5_000;

/**
 * Layer 6 — Entry (AGN-027 G), with the turn lifecycle (docs/architecture.md): one `execute(request, principal)`
 * for both request scenarios, plus the owner-only reads the server's routes answer. TurnAdmission decides what
 * a request gets (as data); `#answer` is the one place that acts on that decision.
 */
export class AgentService {
  readonly #persistence: TurnPersistence;
  readonly #settlement: TurnSettlement;
  readonly #admission: TurnAdmission;
  readonly #rounds: RoundRunner;
  readonly #follower: TurnFollower;
  readonly #reads: ReadModels;
  readonly #usage: UsageReports;
  readonly #lists: SessionLists;
  readonly #deletion: SessionDeletion;
  readonly #cancellation: TurnCancellation;
  readonly #rewind: SessionRewind;
  readonly #fork: SessionFork;
  readonly #housekeeping: Housekeeping;
  readonly #wakeups = new TurnWakeups();
  readonly #runningRounds: RunningRounds;
  readonly #responseDeletions: StoredResponseDeletions;
  readonly #compaction: SessionCompaction;
  readonly #catalog: AgentCatalog;
  readonly #turns: SessionStores["turns"];
  /**
   * Sessions this instance queued turns in, or started one from its queue: only those are read again when a
   * round ends here, so a session that never queued costs its turns nothing. Queued elsewhere, a turn is
   * started by the poll (`startQueuedTurns`).
   */
  readonly #queuing = new Set<string>();

  constructor(options: AgentServiceOptions) {
    const { catalog } = options;
    this.#catalog = catalog;
    this.#turns = options.store.turns;
    const clock = options.clock ?? systemClock;
    const ids = options.ids ?? randomIdGenerator;
    const observer = options.observer ?? unobserved;
    const events = options.events ?? new InMemoryTurnEventLog(options.store.turns);
    const providers = new Map(options.providers.map((provider) => [provider.id, provider]));
    this.#runningRounds = new RunningRounds({
      events,
      turns: options.store.turns,
      ...(options.cancelPollMs === undefined ? {} : { pollMs: options.cancelPollMs }),
    });
    this.#persistence = new TurnPersistence({
      stores: options.store,
      clock,
      ids,
      leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
      maxRunningTurns: options.maxRunningTurns ?? DEFAULT_MAX_RUNNING_TURNS,
      ...(options.webhooks?.length ? { webhookEvents: new WebhookEvents(options.webhooks, ids) } : {}),
    });
    this.#settlement = new TurnSettlement(catalog.modes, clock);
    this.#usage = new UsageReports(options.store.usage, new PriceList(options.prices));
    const budgets = options.budgets && new Budgets(options.budgets, this.#usage, clock);
    const withBudgets = budgets ? { budgets } : {};
    const hashing = options.hashing ?? sha256ContentHashService;
    const persistence = this.#persistence;
    this.#admission = new TurnAdmission({
      catalog,
      persistence,
      transcripts: options.store.transcripts,
      clock,
      hashing,
      ...withBudgets,
    });
    const maxLlmCalls = options.maxLlmCallsPerRequest ?? DEFAULT_MAX_LLM_CALLS_PER_REQUEST;
    const shared = { clock, hashing, ids, observer, maxLlmCalls, withBudgets };
    const { composition, compactor, reasoner } = this.#reasoner(options, shared);
    this.#compaction = new SessionCompaction(
      persistence,
      options.store.directory,
      catalog,
      composition,
      providers,
      compactor,
      clock,
      { ...withBudgets, maxLlmCalls },
    );
    this.#rounds = new RoundRunner({
      providers,
      reasoner,
      settlement: this.#settlement,
      modes: catalog.modes,
      events,
      wakeups: this.#wakeups,
      eventFlushMs: options.eventFlushMs ?? 100,
      runningRounds: this.#runningRounds,
      turns: persistence,
      observer,
    });
    this.#follower = new TurnFollower({
      persistence,
      events,
      wakeups: this.#wakeups,
      pollMs: options.followPollMs ?? DEFAULT_FOLLOW_POLL_MS,
    });
    const { directory } = options.store;
    this.#reads = new ReadModels(persistence, options.store, catalog, options.files, clock, this.#usage);
    this.#lists = new SessionLists(persistence, directory, catalog.modes);
    this.#deletion = new SessionDeletion(persistence, directory, options.files, events, (session) => {
      const provider = providers.get(
        catalog.conversationContext(session.conversationContextId)?.provider ?? "",
      );
      return provider?.storesResponses && provider.deleteStoredResponse ? provider.id : undefined;
    });
    this.#responseDeletions = new StoredResponseDeletions(directory, providers, clock);
    this.#cancellation = new TurnCancellation(persistence, this.#runningRounds, this.#wakeups, clock);
    this.#rewind = new SessionRewind(persistence, directory, this.#reads, clock);
    this.#fork = new SessionFork(persistence, directory, this.#reads, clock);
    this.#housekeeping = new Housekeeping({
      persistence,
      stores: options.store,
      events,
      files: options.files,
      clock,
      eventRetentionMs: options.eventRetentionMs ?? DEFAULT_EVENT_RETENTION_MS,
      deletion: this.#deletion,
      traceRetentionMs: options.traceRetentionMs ?? DEFAULT_TRACE_RETENTION_MS,
      ...(options.sessionRetentionMs === undefined ? {} : { sessionRetentionMs: options.sessionRetentionMs }),
    });
  }

  /** The Reasoner and the steps it runs a round through; composition and compactor also serve `compactSession`. */
  #reasoner(
    options: AgentServiceOptions,
    shared: {
      clock: Clock;
      hashing: ContentHashService;
      ids: IdGenerator;
      observer: TurnObserver;
      maxLlmCalls: number;
      withBudgets: { budgets?: Budgets };
    },
  ): { composition: CompositionStep; compactor: Compactor; reasoner: ReasonerStep } {
    const { catalog, retriever } = options;
    const { clock, hashing, ids, observer, maxLlmCalls } = shared;
    const llmCall = new LlmCallStep(observer);
    const composition = new CompositionStep(
      catalog,
      options.cacheKeySecret ?? newCacheKeySecret(),
      retriever && observedRetriever(retriever, observer),
    );
    const compactor = new Compactor(llmCall, clock, observer);
    const files = new FileKeeper({
      store: options.files,
      hashing,
      ids,
      clock,
      ...options.producedFiles,
    });
    const serverTools = new ServerToolExecutionStep({
      registry: catalog.serverTools,
      clock,
      files,
      ...(options.toolTimeoutMs === undefined ? {} : { toolTimeoutMs: options.toolTimeoutMs }),
      observer,
    });
    const reasoner = new ReasonerStep({
      composition,
      llmCall,
      compactor,
      serverTools,
      clock,
      modes: catalog.modes,
      maxLlmCalls,
      ...shared.withBudgets,
    });
    return { composition, compactor, reasoner };
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
    return ok(this.#answerAsEvents(key, request.turnId, admitted.result));
  }

  /**
   * One request, answered the way it asks to be: as one value, or as the events of its round (a continuation
   * streams when its user turn asked to, AGN-034 §2.2). What an HTTP route calls once per request.
   */
  async handle(request: AgentExecuteRequest, principal: string): Promise<HandledRequest> {
    const key = { principal, sessionId: request.sessionId };
    const admitted = await this.#admit(key, request);
    if (!admitted.successful) return { type: "answer", result: admitted, replayed: false };
    const admission = admitted.result;
    const replayed = admission.type === "stored_answer";
    if (!isToolContinuationRequest(request) && request.background === true) {
      return { type: "accepted", accepted: await this.#accepted(key, request.turnId, admission), replayed };
    }
    // A user turn streams when it asks to; a continuation when its turn did (admission read the turn anyway).
    const streams = !isToolContinuationRequest(request)
      ? request.stream === true
      : admission.type === "stored_answer"
        ? admission.stream
        : admission.turn.stream;
    return streams
      ? { type: "events", events: this.#answerAsEvents(key, request.turnId, admission), replayed }
      : {
          type: "answer",
          result: await this.#answer(key, request.turnId, admission, undefined),
          replayed,
        };
  }

  /**
   * Admits a request; one that interrupts (`multitask: "interrupt"`) and finds a turn running cancels it, as the
   * cancel route does, and is admitted again.
   */
  async #admit(key: SessionKey, request: AgentExecuteRequest): Promise<InvokeResult<Admission>> {
    const admitted = await this.#admission.admit(key, request);
    if (admitted.successful && admitted.result.type === "follow") this.#queuing.add(queueKey(key));
    const interrupts = !isToolContinuationRequest(request) && request.multitask === "interrupt";
    if (!interrupts || admitted.successful || admitted.errors[0].code !== "SESSION_BUSY") return admitted;
    const openTurnId = (await this.#persistence.getSession(key))?.openTurnId;
    if (!openTurnId || openTurnId === request.turnId) return admitted;
    await this.#cancellation.cancel(key, openTurnId);
    return this.#admission.admit(key, request);
  }

  /**
   * A background turn's acceptance: the admitted round runs here with no client (its events kept for followers),
   * a queued turn waits for its start; its status as it is now.
   */
  async #accepted(key: SessionKey, turnId: string, admission: Admission): Promise<TurnAccepted> {
    if (admission.type === "run_round" || admission.type === "settle_failure") {
      this.#runUnattended(key, turnId, admission);
    }
    const turn = await this.#persistence.getTurn(key, turnId);
    return { sessionId: key.sessionId, turnId, status: turn?.status ?? "running" };
  }

  /**
   * Runs an admitted round no client waits for: its events go to the log for any follower. The round runner
   * fails the turn for whatever its round throws; what still escapes (the store gone) leaves the turn to the
   * reaper.
   */
  #runUnattended(key: SessionKey, turnId: string, admission: Admission): void {
    this.#answer(key, turnId, admission, () => undefined).catch(() => undefined);
  }

  /**
   * Starts the session's first queued turn when no turn holds the session any more, here, unattended (its
   * request, wherever it waits, follows it). Read along with `turnId`, any turn of the session. Whether it started.
   */
  async #startQueued(key: SessionKey, turnId: string): Promise<boolean> {
    const { round, queued } = await this.#admission.startQueued(key, turnId);
    if (queued) this.#queuing.add(queueKey(key));
    else this.#queuing.delete(queueKey(key));
    if (!round) return false;
    this.#runUnattended(key, round.turn.turnId, { type: "run_round", ...round });
    return true;
  }

  /**
   * Starts the queued turns whose turns before them ended and that no instance started (their instance stopped
   * before it could): one per such session, at most `limit`. The instance that ends a turn starts the next at
   * once; this is the poll beside the reaper that catches the rest. Returns how many it started.
   */
  async startQueuedTurns(limit = 100): Promise<number> {
    let started = 0;
    for (const turn of await this.#turns.findStartableQueued(limit)) {
      if (await this.#startQueued(turn, turn.turnId)) started++;
    }
    return started;
  }

  #answerAsEvents(key: SessionKey, turnId: string, admission: Admission): AsyncIterable<TurnEvent> {
    // A turn under way elsewhere (queued, or run unattended) is followed from its first event.
    if (admission.type === "follow") return this.#eventsFromLog(key, turnId, undefined);
    // A reader that fell behind goes on from the log: after its last event, or from the round's start.
    const roundStart = admission.round === 0 ? undefined : `${admission.round - 1}-result`;
    const events = new TurnEventQueue({
      catchUp: (lastEventId) => this.#eventsFromLog(key, turnId, lastEventId ?? roundStart),
    });
    this.#answer(key, turnId, admission, (event) => events.push(event)).then(
      () => events.end(),
      (error: unknown) => events.end({ error }),
    );
    return events;
  }

  /** A live stream's events after `lastEventId`, read from the event log as a follower reads them. */
  async *#eventsFromLog(key: SessionKey, turnId: string, lastEventId: string | undefined) {
    const turn = await this.#persistence.getTurn(key, turnId);
    if (!turn) throw new Error(`turn ${turnId} is gone`);
    const followed = this.#follower.resume(key, turn, lastEventId);
    if (!followed.successful) throw new Error(followed.errors[0].message);
    yield* followed.result;
  }

  /** The one place an admission is acted on: the round's answer, streamed to `onEvent` when given. */
  async #answer(
    key: SessionKey,
    turnId: string,
    admission: Admission,
    onEvent: EventSink | undefined,
  ): Promise<InvokeResult<AgentExecuteResponse>> {
    const result = await this.#resultOf(admission, onEvent);
    onEvent?.(resultEvent(admission.round, result));
    this.#wakeups.notify(key, turnId);
    // A round that ran here and ended its turn lets the session's next queued turn start, here and now, without
    // keeping this round's client waiting for it (a failed start is the poll's to retry).
    const ran = admission.type === "run_round" || admission.type === "settle_failure";
    if (ran && this.#queuing.has(queueKey(key))) void this.#startQueued(key, turnId).catch(() => false);
    return result;
  }

  #resultOf(
    admission: Admission,
    onEvent: EventSink | undefined,
  ): Promise<InvokeResult<AgentExecuteResponse>> {
    switch (admission.type) {
      case "stored_answer":
        // Sent again as a stream: its text as a delta first, so a client showing deltas shows the answer.
        if (onEvent)
          for (const event of storedAnswerEvents(admission.round, admission.result)) onEvent(event);
        return Promise.resolve(admission.result);
      case "settle_failure": {
        const { lease, turn, failure } = admission;
        return this.#settlement.failure({ lease, turn, progress: storedProgress(turn), failure });
      }
      case "run_round":
        return this.#rounds.run(admission, onEvent);
      case "follow":
        return this.#awaitRound(admission.turn, admission.round);
    }
  }

  /** The answer of `round` of a turn under way elsewhere (queued, or run unattended), once it has it. */
  async #awaitRound(turn: TurnRecord, round: number): Promise<InvokeResult<AgentExecuteResponse>> {
    const followed = this.#follower.resume(turn, turn, undefined);
    if (followed.successful) {
      for await (const event of followed.result) {
        if (event.event === "result" && parseEventId(event.id)?.round === round) break;
      }
    }
    // The stored answer, as the store keeps it (the event is its wire form).
    const answer = (await this.#persistence.getTurn(turn, turn.turnId))?.rounds[round]?.result;
    return answer ?? turnNotFound(turn, turn.turnId, !!(await this.#persistence.getSession(turn)));
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
    if (!turn) return turnNotFound(key, turnId, !!(await this.#persistence.getSession(key)));
    return this.#follower.resume(key, turn, lastEventId, signal);
  }

  /**
   * See Housekeeping.failExpiredTurns: the reaper of turns whose instance stopped. The queued turn next in each
   * session it freed starts here.
   */
  async failExpiredTurns(options: { expiredForMs?: number; limit?: number } = {}): Promise<number> {
    const reaped = await this.#housekeeping.failExpiredTurns(options);
    if (reaped > 0) await this.startQueuedTurns();
    return reaped;
  }

  /**
   * A turn as `GET …/turns/:turnId` shows it (see `turnStateView`): its status, and the answer its latest round
   * got once it has one. Another principal's ids answer as unknown ones.
   */
  async getTurnState(
    principal: string,
    sessionId: string,
    turnId: string,
  ): Promise<InvokeResult<TurnStateView>> {
    const key = { principal, sessionId };
    const turn = await this.#persistence.getTurn(key, turnId);
    if (!turn) return turnNotFound(key, turnId, !!(await this.#persistence.getSession(key)));
    return ok(turnStateView(turn));
  }

  /**
   * Compacts the session's conversation now (`POST …/compact`, docs/context-window.md): SESSION_BUSY while a turn is open;
   * `compacted: false`, no call made, when there is no turn since the latest compaction; BUDGET_EXCEEDED past a
   * budget of the principal.
   */
  compactSession(principal: string, sessionId: string): Promise<InvokeResult<SessionCompacted>> {
    return this.#compaction.compact({ principal, sessionId });
  }

  /** See StoredResponseDeletions: deletes at their provider the responses of deleted sessions. */
  deleteStoredResponses(): Promise<StoredResponseDeletionRun> {
    return this.#responseDeletions.run();
  }

  /** See Housekeeping.sweepFiles: the sweep of expired files and of failed turns' files. */
  sweepFiles(): Promise<number> {
    return this.#housekeeping.sweepFiles();
  }

  /** See Housekeeping.pruneTurnEvents: drops the stream events of turns ended `eventRetentionMs` ago. */
  pruneTurnEvents(): Promise<number> {
    return this.#housekeeping.pruneTurnEvents();
  }

  /** See Housekeeping.sweepIdleSessions: the session retention. */
  sweepIdleSessions(): Promise<number> {
    return this.#housekeeping.sweepIdleSessions();
  }

  /** See Housekeeping.pruneTraces: the trace retention. */
  pruneTraces(): Promise<number> {
    return this.#housekeeping.pruneTraces();
  }

  /**
   * The catalog's modes and the mode a new session starts in, for the default conversation context (the one a
   * request naming no `conversationContextId` gets): what a client shows in its mode picker.
   */
  listModes(): ModeList {
    const context = this.#catalog.conversationContext(undefined);
    const modes = this.#catalog.modes.ids.map((id) => this.#catalog.modes.get(id));
    return {
      modes: modes.map(({ id, displayName }) => ({ id, displayName })),
      defaultModeId: context ? this.#catalog.defaultModeOf(context).id : (modes[0]?.id ?? ""),
    };
  }

  getSession(principal: string, sessionId: string): Promise<InvokeResult<SessionSummary>> {
    return this.#reads.getSession(principal, sessionId);
  }

  /** The principal's sessions, most recently active first (see SessionLists). */
  listSessions(
    principal: string,
    page: PageRequest & { workspaceId?: string; q?: string },
  ): Promise<InvokeResult<SessionList>> {
    return this.#lists.listSessions(principal, page);
  }

  /** A session's conversation as a UI shows it, oldest first (see SessionLists). */
  listMessages(
    principal: string,
    sessionId: string,
    page: PageRequest & { includeSuperseded?: boolean },
  ): Promise<InvokeResult<SessionMessages>> {
    return this.#lists.listMessages(principal, sessionId, page);
  }

  /**
   * Cancels a running or awaiting turn (see TurnCancellation): it ends `cancelled`, its round stops wherever it
   * runs, and the session is free at once. Answers the turn's summary; a turn already ended, as it is.
   */
  async cancelTurn(principal: string, sessionId: string, turnId: string): Promise<InvokeResult<TurnSummary>> {
    const key = { principal, sessionId };
    const cancelled = await this.#cancellation.cancel(key, turnId);
    // The session is free at once: its next queued turn starts here (a failed start is the poll's to retry).
    if (cancelled.successful) void this.#startQueued(key, turnId).catch(() => false);
    return cancelled;
  }

  /**
   * Takes the session back to before `beforeTurnId` (see SessionRewind): that turn and the later ones are kept,
   * superseded, and the next turn continues from where it began. Answers the session's view.
   */
  rewindSession(
    principal: string,
    sessionId: string,
    beforeTurnId: string,
  ): Promise<InvokeResult<SessionSummary>> {
    return this.#rewind.rewind({ principal, sessionId }, beforeTurnId);
  }

  /**
   * The user turn that answers the session's last turn `turnId` again as `newTurnId`, the session rewound before
   * it (see SessionRewind): `handle` runs it as any user turn.
   */
  regeneration(
    principal: string,
    sessionId: string,
    turnId: string,
    again: { newTurnId: string; stream?: boolean },
  ): Promise<InvokeResult<UserTurnRequest>> {
    return this.#rewind.regeneration({ principal, sessionId }, turnId, again);
  }

  /**
   * A new session of the principal whose conversation is this one's up to `atTurnId` (all of it when absent),
   * sharing nothing the provider stores with it (see SessionFork). Answers the fork's view.
   */
  forkSession(
    principal: string,
    sessionId: string,
    to: { newSessionId: string; atTurnId?: string },
  ): Promise<InvokeResult<SessionSummary>> {
    return this.#fork.fork({ principal, sessionId }, to);
  }

  /** Deletes the session and everything of it; SESSION_BUSY while a turn runs (see SessionDeletion). */
  deleteSession(principal: string, sessionId: string): Promise<InvokeResult<SessionDeleted>> {
    return this.#deletion.delete({ principal, sessionId });
  }

  /** The principal's usage in `range`, by UTC day, model or a page of sessions, with its total. */
  usage(principal: string, range: TimeRange, query: UsageReportQuery): Promise<UsageReport> {
    return this.#usage.report(principal, range, query);
  }

  /** What the principal spent in `range`, as a budget counts it: tokens in and out, and USD of priced calls. */
  spent(principal: string, range: TimeRange): Promise<Spent> {
    return this.#usage.spent(principal, range);
  }

  getTurnTrace(principal: string, sessionId: string, turnId: string): Promise<InvokeResult<TurnTrace>> {
    return this.#reads.getTurnTrace(principal, sessionId, turnId);
  }

  getFile(
    principal: string,
    fileId: string,
  ): Promise<InvokeResult<{ file: StoredFile; content: Uint8Array }>> {
    return this.#reads.getFile(principal, fileId);
  }
}

/** A session's key as one string, for the sessions this instance queues turns in. */
function queueKey({ principal, sessionId }: SessionKey): string {
  return JSON.stringify([principal, sessionId]);
}

/** `retriever` with each retrieval watched by `observer`. */
function observedRetriever(retriever: ContextRetriever, observer: TurnObserver): ContextRetriever {
  return {
    retrieve: (query) =>
      observer.retrieval({ workspaceId: query.workspaceId, limit: query.limit }, () =>
        retriever.retrieve(query),
      ),
  };
}
