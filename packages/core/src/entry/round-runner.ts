import { type AgentExecuteResponse, fail, type InvokeFailure, type InvokeResult } from "@aptix/contracts";
import type { ModeCatalog } from "../catalog/mode-catalog.js";
import { storedProgress } from "../lifecycle/turn-endings.js";
import type { TurnPersistence } from "../persistence/turn-persistence.js";
import type { TurnSettlement } from "../persistence/turn-settlement.js";
import type { LlmProvider } from "../ports/llm-provider.js";
import { isStoreUnavailable } from "../ports/store-unavailable-error.js";
import type { TurnEventLog } from "../ports/turn-event-log.js";
import type { ObservedRound, TurnObserver } from "../ports/turn-observer.js";
import type { ReasonerStep } from "../reasoner/reasoner-step.js";
import type { TurnEvent } from "../records/turn-event.js";
import type { TurnProgress } from "../records/turn-progress.js";
import { TurnEventRecorder } from "../streaming/turn-event-recorder.js";
import type { TurnWakeups } from "../streaming/turn-wakeups.js";
import type { RunningRound } from "./admission.js";
import type { RunningRounds } from "./running-rounds.js";

/** Where a streamed round's events go. */
export type EventSink = (event: TurnEvent) => void;

export interface RoundRunnerOptions {
  /** One per `ConversationContext.provider` id. */
  providers: ReadonlyMap<string, LlmProvider>;
  reasoner: ReasonerStep;
  settlement: TurnSettlement;
  modes: ModeCatalog;
  events: TurnEventLog;
  wakeups: TurnWakeups;
  eventFlushMs: number;
  /** Stops a round whose turn is cancelled. */
  runningRounds: RunningRounds;
  /** Where a stopped round reads how its turn ended. */
  turns: Pick<TurnPersistence, "getTurn">;
  /** Watches each round, from its start to its answer. */
  observer: TurnObserver;
}

/**
 * Runs an admitted round: the Reasoner with the turn's progress so far, its text streamed when asked, then
 * the round settled. Whatever it throws fails the turn (never the session) instead of escaping.
 */
export class RoundRunner {
  readonly #options: RoundRunnerOptions;

  constructor(options: RoundRunnerOptions) {
    this.#options = options;
  }

  run(round: RunningRound, onEvent: EventSink | undefined): Promise<InvokeResult<AgentExecuteResponse>> {
    return this.#options.observer.round(observed(round), () => this.#run(round, onEvent));
  }

  async #run(
    round: RunningRound,
    onEvent: EventSink | undefined,
  ): Promise<InvokeResult<AgentExecuteResponse>> {
    const { turn } = round;
    const running = await this.#options.runningRounds.start(turn, turn.turnId);
    try {
      const result = await this.#settled(round, onEvent, running.signal);
      if (result.successful || (!running.signal.aborted && result.errors[0].code !== "TURN_INTERRUPTED")) {
        return result;
      }
      // The round stopped, or lost its lease: when a cancel ended its turn, the answer is the cancel's.
      const ended = await this.#options.turns.getTurn(turn, turn.turnId);
      const stored = ended?.status === "cancelled" ? ended.rounds[round.round]?.result : undefined;
      return stored ?? result;
    } finally {
      running.done();
    }
  }

  async #settled(
    round: RunningRound,
    onEvent: EventSink | undefined,
    signal: AbortSignal,
  ): Promise<InvokeResult<AgentExecuteResponse>> {
    try {
      return await this.#reason(round, onEvent, signal);
    } catch (error) {
      const unavailable = isStoreUnavailable(error);
      // What was thrown (a driver's message quoting a statement and its parameters: the boot prompt, the
      // transcript) is for the operator only: the answer, and the turn it is stored in, say what failed.
      if (!unavailable) this.#options.observer.fault?.(observed(round), error);
      const failure = unavailable
        ? fail(
            "NOT_READY",
            "The database could not be reached while the turn ran; the turn failed. Send it again as a new turn once the service is ready.",
            { turnId: round.turn.turnId, retryable: true },
          )
        : unexpected();
      try {
        return await this.#options.settlement.failure({
          lease: round.lease,
          turn: round.turn,
          progress: storedProgress(round.turn),
          failure,
        });
      } catch (settling) {
        // The failure could not be stored either: the turn stays running, but not its lease, freed here (if the
        // database is back already), so the session's next request takes it over at once (see TurnAdmission).
        await round.lease.release().catch(() => undefined);
        if (!isStoreUnavailable(settling)) {
          this.#options.observer.fault?.(observed(round), settling);
          return unexpected();
        }
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

  async #reason(
    round: RunningRound,
    onEvent: EventSink | undefined,
    signal: AbortSignal,
  ): Promise<InvokeResult<AgentExecuteResponse>> {
    const { lease, session, turn, context } = round;
    const { settlement } = this.#options;
    const progress: TurnProgress = {
      cursor: session.cursor,
      usage: turn.usage,
      llmCallCount: turn.llmCallCount,
      toolExecutions: [...turn.toolExecutions],
      files: [...turn.files],
      warnings: round.warnings,
    };
    const provider = this.#options.providers.get(context.provider);
    if (!provider) {
      const failure = fail(
        "INTERNAL",
        `No LLM provider ${JSON.stringify(context.provider)} is configured for conversation context ${context.id}.`,
      );
      return settlement.failure({ lease, turn, progress, failure });
    }
    const recorder = onEvent && (await this.#recorderFor(round, onEvent));
    const outcome = await this.#options.reasoner.run({
      lease,
      provider,
      context,
      mode: this.#options.modes.get(turn.mode),
      session,
      turnId: turn.turnId,
      opening: round.opening,
      progress,
      ...(recorder ? { text: recorder } : {}),
      signal,
      budgetJudged: round.admittedUnderBudget === true,
    });
    // Every delta is in the log before the round's result is visible to followers.
    await recorder?.flush();
    if (!outcome.successful) return settlement.failure({ lease, turn, progress, failure: outcome });
    return settlement.success({ lease, turn, progress, outcome: outcome.result });
  }

  async #recorderFor(round: RunningRound, onEvent: EventSink): Promise<TurnEventRecorder> {
    const { turn, rerun = false } = round;
    const { events } = this.#options;
    // A round run again numbers its deltas after the earlier attempt's, so an event id names one event.
    const earlier = rerun ? await events.list(turn, turn.turnId, round.round, -1) : [];
    const recorder = new TurnEventRecorder({
      log: events,
      wakeups: this.#options.wakeups,
      key: turn,
      turnId: turn.turnId,
      leaseOwner: round.lease.owner,
      round: round.round,
      onEvent,
      flushMs: this.#options.eventFlushMs,
      firstSeq: (earlier.at(-1)?.seq ?? -1) + 1,
    });
    // What the earlier attempt streamed is not the answer: clients drop it before the new attempt's text.
    if (rerun) recorder.reset();
    return recorder;
  }
}

/** A failure the client did not cause: what it was is in the operator's traces and logs, never in the answer. */
function unexpected(): InvokeFailure {
  return fail(
    "INTERNAL",
    "The turn failed unexpectedly; the request id identifies it in the service's logs.",
  );
}

/** What names `round` to its observer. */
function observed({ turn, context, round }: RunningRound): ObservedRound {
  return {
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    round,
    mode: turn.mode,
    provider: context.provider,
    model: context.model,
  };
}
