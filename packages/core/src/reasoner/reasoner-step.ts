import { type InvokeFailure, type InvokeResult, ok } from "@aptix/contracts";
import type { ConversationContext } from "../catalog/conversation-context.js";
import type { Mode } from "../catalog/mode.js";
import type { ModeCatalog } from "../catalog/mode-catalog.js";
import { type CompositionStep, needsReplay } from "../composition/composition-step.js";
import type { RoundOpening } from "../composition/round-opening.js";
import type { LlmCallStep } from "../llm-call/llm-call-step.js";
import type { Clock } from "../ports/clock.js";
import { isContextOverflow, isContinuationLost, type LlmProvider } from "../ports/llm-provider.js";
import { heldContextOf } from "../records/conversation-cursor.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { LlmRequest } from "../records/llm-request.js";
import type { LlmFinishReason, LlmToolCall } from "../records/llm-response.js";
import type { SessionRecord } from "../records/session-record.js";
import { addUsage, type TurnProgress } from "../records/turn-progress.js";
import type { PendingToolCalls } from "../records/turn-record.js";
import type { ServerToolExecutionStep } from "../server-tools/server-tool-execution-step.js";
import type { Budgets } from "../usage/budgets.js";
import { AnswerText, type TextSink } from "./answer-text.js";
import { advancedCursor } from "./call-cursors.js";
import type { Compactor } from "./compactor.js";
import { RoomMaker } from "./make-room.js";
import { type AnsweredCall, type CallModel, failed, type NextStep } from "./next-step.js";
import type { RoundLease } from "./round-lease.js";
import { budgetSpent, callsLeft, iterationLimit, type RoundState, takeOpening } from "./round-state.js";
import { ToolCalls } from "./tool-calls.js";
import { tracedCall } from "./traced-call.js";

export interface ReasonerInput {
  lease: RoundLease;
  provider: LlmProvider;
  context: ConversationContext;
  /** The turn's mode: its tools and forced choice hold for the whole loop (AGN-011 §4.4). */
  mode: Mode;
  /** The session as the round found it: left as it is, a mode change comes back in the outcome. */
  session: SessionRecord;
  turnId: string;
  /** What the round answers: a user turn (its first call is the turn's first), or a tool continuation. */
  opening: RoundOpening;
  progress: TurnProgress;
  /** Where the round's text streams, when it streams. */
  text?: TextSink;
  /**
   * Aborted when the turn is cancelled: the provider call and a running server tool stop at once, and the
   * round's next write finds the lease gone.
   */
  signal?: AbortSignal;
  /** The round's first call was judged against the budget as its turn was admitted: it is not judged again. */
  budgetJudged?: boolean;
}

export interface ReasonerStepOptions {
  composition: CompositionStep;
  llmCall: LlmCallStep;
  serverTools: ServerToolExecutionStep;
  /** Keeps the conversation within the model's context window (docs/context-window.md). */
  compactor: Compactor;
  clock: Clock;
  /** The configured modes, for the welcome of a mode the turn changed to. */
  modes: ModeCatalog;
  /**
   * LLM calls one request may make, summarising calls included, before its turn fails with
   * ITERATION_LIMIT_EXCEEDED.
   */
  maxLlmCalls: number;
  /** Judged before each further round of a turn; none when absent. */
  budgets?: Budgets;
}

/**
 * How a round ends, and what it changed that its answer shows: `sessionMode`, the session's mode after the
 * round (already stored through the lease), whose display name Persistence puts in the answer.
 */
export type ReasonerOutcome = { sessionMode: string } & (
  | { kind: "final"; text: string; finishReason: LlmFinishReason }
  | { kind: "client_tools"; text: string; clientCalls: LlmToolCall[]; pending: PendingToolCalls }
);

/**
 * Layer 4 — Reasoner (AGN-027 E): the only layer that loops. Compose → call → server tools → compose with
 * their outputs, until the model answers with text (final) or asks for a client tool (continuation).
 * It applies mode changes, prepends the welcome of a mode the turn changed to, and bounds the loop.
 *
 * Each step returns the next (`NextStep`, docs/architecture.md "The reasoner's steps") and `run` applies it:
 * a model call, making room in the context (`RoomMaker`), server tools, or an end of the round.
 *
 * Streamed text follows the answer: a call whose text will not be the answer (it asked for server tools, or
 * its continuation was lost) is followed by a reset, so the deltas since the last reset always add up to the
 * round's `primaryOutputText` (or `toolContinuationMessage`).
 */
export class ReasonerStep {
  private readonly composition: CompositionStep;
  private readonly llmCall: LlmCallStep;
  private readonly serverTools: ServerToolExecutionStep;
  private readonly compactor: Compactor;
  private readonly clock: Clock;
  private readonly modes: ModeCatalog;
  private readonly maxLlmCalls: number;
  private readonly budgets: Budgets | undefined;
  /** The one hook that keeps the round's calls within the context window. */
  readonly #room: RoomMaker;
  readonly #tools: ToolCalls;

  constructor(options: ReasonerStepOptions) {
    ({
      composition: this.composition,
      llmCall: this.llmCall,
      serverTools: this.serverTools,
      compactor: this.compactor,
      clock: this.clock,
      modes: this.modes,
      maxLlmCalls: this.maxLlmCalls,
      budgets: this.budgets,
    } = options);
    this.#room = new RoomMaker(this.compactor, this.composition);
    this.#tools = new ToolCalls(options);
  }

  async run(input: ReasonerInput): Promise<InvokeResult<ReasonerOutcome>> {
    // A round of a turn admitted before (a continuation, a round run again) spends nothing past the budget.
    const spent = input.budgetJudged ? undefined : await budgetSpent(this.budgets, input, "");
    if (spent) return spent;
    const started = await this.#start(input);
    if (!started.successful) return started;
    const round = started.result;
    // Streamed or not, every round runs this loop: each step says what comes next, until one ends the round.
    let next: NextStep = { type: "call_model" };
    for (;;) {
      const applied = await this.#apply(round, next);
      if (!("type" in applied)) return applied;
      next = applied;
    }
  }

  /** Takes one step: the step after it, or the round's outcome when it ends the round. */
  async #apply(round: RoundState, step: NextStep): Promise<NextStep | InvokeResult<ReasonerOutcome>> {
    const { sessionMode } = round;
    switch (step.type) {
      case "call_model":
        return this.#callModel(round, step);
      case "make_room":
        return this.#room.make(round, step);
      case "run_server_tools":
        return this.#tools.run(round, step.call);
      case "final_answer":
        return ok({ kind: "final", sessionMode, text: step.text, finishReason: step.finishReason });
      case "hand_to_client": {
        const { text, clientCalls, pending } = step;
        return ok({ kind: "client_tools", sessionMode, text, clientCalls, pending });
      }
      case "fail":
        return step.failure;
    }
  }

  /** The round's state once its opening is composed: approved calls run, the user turn's message and context. */
  async #start(input: ReasonerInput): Promise<InvokeResult<RoundState>> {
    const { session, progress } = input;
    const firstCall = progress.llmCallCount;
    // The user's answers to the calls that asked first: approved ones run now, before the model hears of them.
    const approved = await this.#tools.answerApprovals(input);
    if (!approved.successful) return approved;
    // Composed once: a replay after a lost continuation resends the same items.
    const opened = await this.composition.openRound(approved.result, session, progress.cursor, input.context);
    if (!opened.successful) return opened;
    if (opened.result.retrieval) progress.retrieval = opened.result.retrieval;
    progress.warnings.push(...opened.warnings);
    const round: RoundState = {
      input,
      newItems: [],
      sessionMode: session.mode,
      heldByTurn: {},
      firstCallOfTurn: input.opening.type === "user_turn",
      continuationLost: false,
      overflowCompacted: false,
      estimate: undefined,
      window: this.compactor.windowOf(input.context),
      firstCall,
      maxLlmCalls: this.maxLlmCalls,
    };
    takeOpening(round, opened.result);
    return ok(round);
  }

  /**
   * One iteration: the round's next call composed, judged against the window, sent and kept; what the model
   * answered says what comes next.
   */
  async #callModel(round: RoundState, step: CallModel): Promise<NextStep> {
    if (callsLeft(round) <= 0) return failed(iterationLimit(round));
    const composed = await this.#compose(round);
    if (!composed.successful) return failed(composed);
    const request = composed.result;
    const room = step.roomChecked ? undefined : this.#room.check(round, request);
    if (room) return room;
    const { input } = round;
    const { session, progress } = input;
    const cursor = progress.cursor;
    const text = new AnswerText(input.text, this.#welcome(input.mode, round.sessionMode));
    const { answered, record } = await tracedCall({
      llmCall: this.llmCall,
      clock: this.clock,
      provider: input.provider,
      request,
      options: {
        ...(input.text ? { onTextDelta: text.delta } : {}),
        ...(input.signal ? { signal: input.signal } : {}),
      },
      turn: { principal: session.principal, sessionId: session.sessionId, turnId: input.turnId },
      progress,
    });
    if (!answered.successful) return this.#refused(round, { request, record, answered });
    // The turn's user message goes with its first call: from then on the model has been told its mode and
    // holds its context chunks.
    const held = round.firstCallOfTurn ? round.heldByTurn : heldContextOf(cursor);
    return this.#answered(round, record, { request, response: answered.result, cursor, held, text });
  }

  /** The round's next call as composed now: replaying the transcript when it must. */
  async #compose(round: RoundState): Promise<InvokeResult<LlmRequest>> {
    const { input } = round;
    const at = input.progress.cursor;
    const replay = needsReplay(at, input.provider.storesResponses, round.continuationLost)
      ? await input.lease.loadTranscript(at.transcriptLength, at.replayFrom)
      : undefined;
    return this.composition.run({
      context: input.context,
      session: input.session,
      mode: input.mode,
      currentModeId: round.sessionMode,
      cursor: at,
      newItems: round.newItems,
      firstCallOfTurn: round.firstCallOfTurn,
      ...(replay ? { replay } : {}),
    });
  }

  /**
   * A call the provider failed, kept with its trace: sent again once, replayed, when its continuation was lost;
   * room made once when it was too long; else the round's failure.
   */
  async #refused(
    round: RoundState,
    call: { request: LlmRequest; record: LlmCallRecord; answered: InvokeFailure },
  ): Promise<NextStep> {
    const { input } = round;
    const kept = await input.lease.recordLlmCall(call.record);
    if (!kept.successful) return failed(kept);
    const { answered } = call;
    // The provider forgot the response we continued from: replay the transcript once instead of failing.
    if (
      isContinuationLost(answered) &&
      !round.continuationLost &&
      input.progress.cursor.transcriptLength > 0
    ) {
      round.continuationLost = true;
      input.text?.reset();
      return { type: "call_model" };
    }
    // The provider's ids stay in the trace just recorded: the turn's answer carries the errors alone.
    const failure: InvokeFailure = {
      successful: false,
      errors: answered.errors,
      warnings: answered.warnings,
    };
    const room = isContextOverflow(answered)
      ? this.#room.afterOverflow(round, call.request, failure)
      : undefined;
    return room ?? failed(failure);
  }

  /** A call the model answered, kept with the transcript it added: its text is the answer, or its tool calls run. */
  async #answered(round: RoundState, record: LlmCallRecord, call: AnsweredCall): Promise<NextStep> {
    const { input } = round;
    const { request, response } = call;
    const advanced = advancedCursor(call);
    const kept = await input.lease.recordLlmCall(
      record,
      {
        items: [...request.input, ...response.output],
        fromPosition: call.cursor.transcriptLength,
        cursor: advanced,
      },
      // A call handing its tools to the client is settled with the round it ends.
      response.toolCalls.length > 0 &&
        !this.serverTools.handsRoundToClient(response.toolCalls, request.tools),
    );
    if (!kept.successful) return failed(kept);
    input.progress.cursor = advanced;
    input.progress.usage = addUsage(input.progress.usage, response.usage);
    round.continuationLost = false;
    round.firstCallOfTurn = false;
    if (response.toolCalls.length > 0) return { type: "run_server_tools", call };
    return {
      type: "final_answer",
      text: call.text.answer(response.text),
      finishReason: response.finishReason,
    };
  }

  /** The welcome of the mode the turn changed to (AGN-011 §5.4); none while the turn is in its own mode. */
  #welcome(turnMode: Mode, sessionMode: string): string | undefined {
    if (sessionMode === turnMode.id || !this.modes.has(sessionMode)) return undefined;
    return this.modes.get(sessionMode).welcomeMessage;
  }
}
