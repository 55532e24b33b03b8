import { fail, type InvokeResult, ok } from "@aptix/contracts";
import { CHANGE_MODE_TOOL_NAME, type ChangeModeResult } from "../catalog/change-mode-tool.js";
import type { ConversationContext } from "../catalog/conversation-context.js";
import type { Mode } from "../catalog/mode.js";
import type { ModeCatalog } from "../catalog/mode-catalog.js";
import type { CompositionStep } from "../composition/composition-step.js";
import { needsReplay } from "../composition/composition-step.js";
import { countItemTokens } from "../composition/context-window.js";
import { orderOutputs, type RoundOpening } from "../composition/round-opening.js";
import type { LlmCallStep } from "../llm-call/llm-call-step.js";
import type { Clock } from "../ports/clock.js";
import { isContextOverflow, isContinuationLost, type LlmProvider } from "../ports/llm-provider.js";
import {
  type ConversationCursor,
  type HeldContext,
  heldContextOf,
  isFreshCursor,
} from "../records/conversation-cursor.js";
import type { LlmRequest } from "../records/llm-request.js";
import type { LlmFinishReason, LlmToolCall } from "../records/llm-response.js";
import type { SessionRecord } from "../records/session-record.js";
import type { TranscriptItem } from "../records/transcript-item.js";
import { addUsage, type TurnProgress } from "../records/turn-progress.js";
import type { PendingToolCalls } from "../records/turn-record.js";
import type {
  ServerToolExecutionInput,
  ServerToolExecutionStep,
} from "../server-tools/server-tool-execution-step.js";
import type { Budgets } from "../usage/budgets.js";
import { AnswerText, type TextSink } from "./answer-text.js";
import { callRecord } from "./call-record.js";
import type { Compacted, Compactor } from "./compactor.js";
import type { RoundLease } from "./round-lease.js";

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
  }

  async run(input: ReasonerInput): Promise<InvokeResult<ReasonerOutcome>> {
    const { lease, provider, session, progress } = input;
    // A round of a turn admitted before (a continuation, a round run again) spends nothing past the budget.
    if (!input.budgetJudged) {
      const spent = await this.#budgetSpent(input, "");
      if (spent) return spent;
    }
    // What this request's LLM calls are counted from, summarising calls included.
    const firstCall = progress.llmCallCount;
    const callsLeft = () => this.maxLlmCalls - (progress.llmCallCount - firstCall);
    // The user's answers to the calls that asked first: approved ones run now, before the model hears of them.
    const approved = await this.#answerApprovals(input);
    if (!approved.successful) return approved;
    // Composed once: a replay after a lost continuation resends the same items.
    const opened = await this.composition.openRound(approved.result, session, progress.cursor, input.context);
    if (!opened.successful) return opened;
    let newItems = opened.result.items;
    // The session's mode as the round's mode changes move it; the turn keeps its own (`input.mode`).
    let sessionMode = session.mode;
    if (opened.result.retrieval) progress.retrieval = opened.result.retrieval;
    progress.warnings.push(...opened.warnings);
    // What the provider holds once the turn's user message is sent: its mode, workspace and context chunks.
    let heldByTurn: HeldContext = { mode: input.mode.id, ...opened.result.held };
    let continuationLost = false;
    // A provider's overflow answer compacts and calls again once; a second is the turn's failure.
    let overflowCompacted = false;
    const window = this.compactor.windowOf(input.context);
    // Stays true until a call of this run is answered: a replay after a lost continuation is still the first call.
    let firstCallOfTurn = input.opening.type === "user_turn";
    for (;;) {
      if (callsLeft() <= 0) return this.#iterationLimit();
      const compose = async () => {
        const at = progress.cursor;
        const replay = needsReplay(at, provider.storesResponses, continuationLost)
          ? await lease.loadTranscript(at.transcriptLength, at.replayFrom)
          : undefined;
        return this.composition.run({
          context: input.context,
          session,
          mode: input.mode,
          currentModeId: sessionMode,
          cursor: at,
          newItems,
          firstCallOfTurn,
          ...(replay ? { replay } : {}),
        });
      };
      let composed = await compose();
      if (!composed.successful) return composed;
      // The call's size (docs/context-window.md), estimated for free (the chain's last reported tokens and the new items).
      const sent = countItemTokens(composed.result.input);
      if (sent > window.tokens) return contextTooLarge(sent, window.tokens);
      const estimate = estimateOf(progress.cursor, sent);
      if (estimate !== undefined && estimate > window.compactAt) {
        const compacted = await this.#compact(input, {
          reason: "threshold",
          calls: composed.result,
          tokensBefore: estimate,
          newItems,
          sessionMode,
          inTurn: !firstCallOfTurn,
          maxCalls: callsLeft(),
        });
        if (!compacted.successful) return compacted;
        if (compacted.result !== undefined) {
          // The summary's call took the last the request may make: none is left for the call it made room for.
          if (callsLeft() <= 0) return this.#iterationLimit();
          if (compacted.result.tokensAfter > window.tokens) {
            return contextTooLarge(compacted.result.tokensAfter, window.tokens);
          }
          // The turn's message is composed again: the chunks the old chain held are no longer held.
          if (firstCallOfTurn) {
            const reopened = await this.#reopen(input, session);
            if (!reopened.successful) return reopened;
            newItems = reopened.result.items;
            heldByTurn = { mode: input.mode.id, ...reopened.result.held };
          }
          composed = await compose();
          if (!composed.successful) return composed;
        }
      }
      const cursor = progress.cursor;
      const request = composed.result;

      const startedAt = this.clock.now();
      const text = new AnswerText(input.text, this.#welcome(input.mode, sessionMode));
      const answered = await this.llmCall.run({
        provider,
        request,
        options: {
          ...(input.text ? { onTextDelta: text.delta } : {}),
          ...(input.signal ? { signal: input.signal } : {}),
        },
      });
      const record = callRecord({
        principal: session.principal,
        sessionId: session.sessionId,
        turnId: input.turnId,
        index: progress.llmCallCount,
        provider: provider.id,
        request,
        startedAt,
        endedAt: this.clock.now(),
        answered,
      });
      progress.llmCallCount += 1;
      if (!answered.successful) {
        const kept = await lease.recordLlmCall(record);
        if (!kept.successful) return kept;
        // The provider forgot the response we continued from: replay the transcript once instead of failing.
        if (isContinuationLost(answered) && !continuationLost && cursor.transcriptLength > 0) {
          continuationLost = true;
          input.text?.reset();
          continue;
        }
        // Past the model's window whatever the estimate said (the window configured is too large, or the chain
        // is older than its estimate): compact, keeping recent turns within a quarter of what was refused.
        if (isContextOverflow(answered) && !overflowCompacted && callsLeft() > 0) {
          overflowCompacted = true;
          const compacted = await this.#compact(input, {
            reason: "overflow",
            calls: request,
            tokensBefore: estimate ?? window.tokens,
            ...(estimate === undefined ? {} : { refusedTokens: estimate }),
            newItems,
            sessionMode,
            inTurn: !firstCallOfTurn,
            maxCalls: callsLeft(),
          });
          if (!compacted.successful) return compacted;
          if (compacted.result !== undefined) {
            input.text?.reset();
            if (firstCallOfTurn) {
              const reopened = await this.#reopen(input, session);
              if (!reopened.successful) return reopened;
              newItems = reopened.result.items;
              heldByTurn = { mode: input.mode.id, ...reopened.result.held };
            }
            continue;
          }
        }
        // The provider's ids stay in the trace just recorded: the turn's answer carries the errors alone.
        return { successful: false, errors: answered.errors, warnings: answered.warnings };
      }
      const response = answered.result;
      // The turn's user message goes with its first call: from then on the model has been told its mode and
      // holds its context chunks.
      const held = firstCallOfTurn ? heldByTurn : heldContextOf(cursor);
      const advanced: ConversationCursor = {
        responseId: response.responseId ?? null,
        pendingInput: [],
        transcriptLength: cursor.transcriptLength + request.input.length + response.output.length,
        ...held,
        ...compactionOf(cursor),
        chainTokens: { input: response.usage.inputTokens, output: response.usage.outputTokens },
      };
      const kept = await lease.recordLlmCall(
        record,
        {
          items: [...request.input, ...response.output],
          fromPosition: cursor.transcriptLength,
          cursor: advanced,
        },
        // A call handing its tools to the client is settled with the round it ends.
        response.toolCalls.length > 0 &&
          !this.serverTools.handsRoundToClient(response.toolCalls, request.tools),
      );
      if (!kept.successful) return kept;
      progress.cursor = advanced;
      progress.usage = addUsage(progress.usage, response.usage);
      continuationLost = false;
      firstCallOfTurn = false;

      if (response.toolCalls.length === 0) {
        return ok({
          kind: "final",
          sessionMode,
          text: text.answer(response.text),
          finishReason: response.finishReason,
        });
      }
      const executed = await this.serverTools.run({
        calls: response.toolCalls,
        // What this call offered, and so all a call of its response may use (docs/security.md).
        offered: request.tools,
        ...(input.signal ? { signal: input.signal } : {}),
        context: toolContext(input, session),
      });
      if (!executed.successful) return executed;
      const { outputs, executions, clientCalls, approvals, files, results } = executed.result;
      progress.toolExecutions.push(...executions);
      progress.files.push(...files);

      const modeChanged = await this.#applyModeChange(input, sessionMode, response.toolCalls, results);
      if (!modeChanged.successful) return modeChanged;
      sessionMode = modeChanged.result;

      if (clientCalls.length > 0) {
        // The continuation's message is the model's text alone: a welcome waits for the turn's final answer.
        if (text.welcomed) {
          input.text?.reset();
          input.text?.delta(response.text);
        }
        return ok({
          kind: "client_tools",
          sessionMode,
          text: response.text,
          clientCalls,
          pending: {
            calls: response.toolCalls,
            clientCallIds: clientCalls.map((call) => call.callId),
            serverOutputs: outputs,
            ...(approvals.length > 0 ? { approvals } : {}),
            // Before the call that asked for these tools, with that call's input still to send: an abandoned
            // turn restores it, so the provider never sees these calls without outputs.
            resumeCursor: {
              // A continuation that was lost and replayed must not be named again: replay from there too.
              responseId: request.continuation.type === "previous_response" ? cursor.responseId : null,
              pendingInput: request.input,
              transcriptLength: cursor.transcriptLength,
              // That input is sent again, the turn's user message with it when this was the turn's first call.
              ...held,
              ...compactionOf(cursor),
              ...(cursor.chainTokens !== undefined ? { chainTokens: cursor.chainTokens } : {}),
            },
          },
        });
      }
      // Past the budget the turn ends here, before its next call, with the text shown so far.
      const spent = await this.#budgetSpent(input, text.answer(response.text));
      if (spent) return spent;
      input.text?.reset();
      newItems = orderOutputs(response.toolCalls, outputs);
    }
  }

  /** The turn's failure when a budget of its principal is spent (its text so far in the details); else undefined. */
  #budgetSpent(input: ReasonerInput, textSoFar: string) {
    return this.budgets?.refusal(input.session.principal, "the turn ended before its next LLM call.", {
      turnId: input.turnId,
      ...(textSoFar === "" ? {} : { partialText: textSoFar }),
    });
  }

  #iterationLimit() {
    return fail(
      "ITERATION_LIMIT_EXCEEDED",
      `The request made ${this.maxLlmCalls} LLM calls (summaries included) without a final answer or a client tool call.`,
      { maxLlmCalls: this.maxLlmCalls },
    );
  }

  /**
   * Compacts the conversation before the round's next call (docs/context-window.md), telling the stream; undefined when
   * there was nothing to compact.
   */
  async #compact(
    input: ReasonerInput,
    what: {
      reason: "threshold" | "overflow";
      /** The call it makes room for: the summary's call sends the conversation with its tools and cache key. */
      calls: Pick<LlmRequest, "tools" | "cacheKey">;
      tokensBefore: number;
      refusedTokens?: number;
      newItems: readonly TranscriptItem[];
      sessionMode: string;
      inTurn: boolean;
      maxCalls: number;
    },
  ): Promise<InvokeResult<Compacted | undefined>> {
    const cursor = input.progress.cursor;
    const compacted = await this.compactor.compact({
      lease: input.lease,
      provider: input.provider,
      context: input.context,
      system: this.composition.systemMessage(input.context, what.sessionMode),
      principal: input.session.principal,
      sessionId: input.session.sessionId,
      turnId: input.turnId,
      cursor,
      unsent: [...cursor.pendingInput, ...what.newItems],
      inTurn: what.inTurn,
      calls: what.calls,
      reason: what.reason,
      tokensBefore: what.tokensBefore,
      ...(what.refusedTokens === undefined ? {} : { refusedTokens: what.refusedTokens }),
      progress: input.progress,
      maxCalls: what.maxCalls,
      ...(input.signal ? { signal: input.signal } : {}),
    });
    if (compacted.successful && compacted.result) {
      const { tokensBefore, tokensAfter, reason } = compacted.result.record;
      input.text?.compacted?.({ tokensBefore, tokensAfter, reason });
    }
    return compacted;
  }

  /**
   * A continuation's opening with the user's answers to the calls that asked first (docs/server-tools.md) turned into those
   * calls' outputs: an approved call runs (its run among the turn's tool runs), a declined one tells the model so.
   * Any other opening as it is.
   */
  async #answerApprovals(input: ReasonerInput): Promise<InvokeResult<RoundOpening>> {
    const { opening, session, progress } = input;
    const approvals = opening.type === "tool_results" ? (opening.pending.approvals ?? []) : [];
    if (opening.type !== "tool_results" || approvals.length === 0) return ok(opening);
    const answered = await this.serverTools.runApproved({
      approvals,
      results: opening.toolResults,
      decidedBy: session.principal,
      context: toolContext(input, session),
      ...(input.signal ? { signal: input.signal } : {}),
    });
    if (!answered.successful) return answered;
    progress.toolExecutions.push(...answered.result.executions);
    progress.files.push(...answered.result.files);
    const asked = new Set(approvals.map((call) => call.callId));
    return ok({
      ...opening,
      toolResults: opening.toolResults.filter((result) => !asked.has(result.toolCallId)),
      pending: {
        ...opening.pending,
        serverOutputs: [...opening.pending.serverOutputs, ...answered.result.outputs],
      },
    });
  }

  /** The user turn's opening composed again, from the compacted chain (its retrieval run again). */
  async #reopen(input: ReasonerInput, session: SessionRecord) {
    return this.composition.openRound(input.opening, session, input.progress.cursor, input.context);
  }

  /** The welcome of the mode the turn changed to (AGN-011 §5.4); none while the turn is in its own mode. */
  #welcome(turnMode: Mode, sessionMode: string): string | undefined {
    if (sessionMode === turnMode.id || !this.modes.has(sessionMode)) return undefined;
    return this.modes.get(sessionMode).welcomeMessage;
  }

  /**
   * AGN-011 §5: the last successful `agent_change_mode` of a response wins; the mode and its history persist at
   * once. Several changes in one turn (in one response, or in its successive responses and rounds) warn
   * `MULTIPLE_MODE_CHANGES` once, counting them all. Answers the session's mode after the response.
   */
  async #applyModeChange(
    input: ReasonerInput,
    sessionMode: string,
    calls: LlmToolCall[],
    results: Map<string, unknown>,
  ): Promise<InvokeResult<string>> {
    const changes = calls
      .filter((call) => call.name === CHANGE_MODE_TOOL_NAME && results.has(call.callId))
      .map((call) => results.get(call.callId) as ChangeModeResult);
    const last = changes.at(-1);
    if (!last) return ok(sessionMode);
    // The turn's runs so far, this response's included: earlier rounds' are on the turn, kept in its progress.
    const inTurn = input.progress.toolExecutions.filter(
      (execution) => execution.name === CHANGE_MODE_TOOL_NAME && execution.resultJson !== undefined,
    ).length;
    if (inTurn > 1) {
      const warnings = input.progress.warnings;
      const earlier = warnings.findIndex((warning) => warning.code === "MULTIPLE_MODE_CHANGES");
      if (earlier >= 0) warnings.splice(earlier, 1);
      warnings.push({
        code: "MULTIPLE_MODE_CHANGES",
        message: `The model changed mode ${inTurn} times in this turn; the last change (${last.mode}) applies.`,
      });
    }
    const session = input.session;
    if (last.mode === sessionMode) return ok(sessionMode);
    const changed = await input.lease.changeMode({
      principal: session.principal,
      sessionId: session.sessionId,
      turnId: input.turnId,
      previousMode: sessionMode,
      newMode: last.mode,
      reason: last.reason,
      changedBy: session.principal,
      changedAt: this.clock.now(),
    });
    return changed.successful ? ok(last.mode) : changed;
  }
}

/** The next call's size, when the chain's is known: its last call's tokens (input and output), then what it sends. */
function estimateOf(cursor: ConversationCursor, sent: number): number | undefined {
  if (cursor.chainTokens !== undefined) return cursor.chainTokens.input + cursor.chainTokens.output + sent;
  return isFreshCursor(cursor) ? sent : undefined;
}

/** The turn's own new input cannot fit in the window, even alone: 413, and the session goes on. */
function contextTooLarge(tokens: number, contextWindowTokens: number) {
  return fail(
    "CONTEXT_TOO_LARGE",
    `This turn's input takes about ${tokens} tokens, more than the model's context window of ${contextWindowTokens}: send less (smaller files or pasted text) and try again.`,
    { tokens, contextWindowTokens },
  );
}

/** Where the latest compaction left the chain: carried by every cursor of that chain. */
function compactionOf(cursor: ConversationCursor): Pick<ConversationCursor, "replayFrom" | "compactedTo"> {
  return {
    ...(cursor.replayFrom !== undefined ? { replayFrom: cursor.replayFrom } : {}),
    ...(cursor.compactedTo !== undefined ? { compactedTo: cursor.compactedTo } : {}),
  };
}

/** Who a server tool runs for, and where. */
function toolContext(input: ReasonerInput, session: SessionRecord): ServerToolExecutionInput["context"] {
  return {
    principal: session.principal,
    sessionId: session.sessionId,
    turnId: input.turnId,
    mode: input.mode.id,
    // The cursor holds the turn's workspace once its user message is sent (the request's, else the session's).
    ...(input.progress.cursor.workspaceId !== undefined
      ? { workspaceId: input.progress.cursor.workspaceId }
      : {}),
  };
}
