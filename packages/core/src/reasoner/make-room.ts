import { fail, type InvokeFailure, type InvokeResult } from "@aptix/contracts";
import type { CompositionStep } from "../composition/composition-step.js";
import { countItemTokens } from "../composition/context-window.js";
import { type ConversationCursor, isFreshCursor } from "../records/conversation-cursor.js";
import type { LlmRequest } from "../records/llm-request.js";
import type { Compacted, Compactor } from "./compactor.js";
import { failed, type MakeRoom, type NextStep } from "./next-step.js";
import { callsLeft, iterationLimit, type RoundState, takeOpening } from "./round-state.js";

/**
 * Keeping a round's calls within the model's context window (docs/context-window.md): the one place that
 * judges a call's size and makes room. Before a call past the threshold, and once after the provider refused
 * one as too long, it compacts the conversation; a turn whose own input cannot fit fails. (Single items over
 * a quarter of the window are cut as every call is composed, in `CompositionStep.run`: that needs no step.)
 */
export class RoomMaker {
  constructor(
    private readonly compactor: Compactor,
    private readonly composition: CompositionStep,
  ) {}

  /** Before `request` is sent: the step that makes room for it, or fails it; undefined when it fits. */
  check(round: RoundState, request: LlmRequest): NextStep | undefined {
    const { window } = round;
    // The call's size, estimated for free (the chain's last reported tokens and the new items).
    const sent = countItemTokens(request.input);
    if (sent > window.tokens) return failed(contextTooLarge(sent, window.tokens));
    const estimate = estimateOf(round.input.progress.cursor, sent);
    round.estimate = estimate;
    if (estimate === undefined || estimate <= window.compactAt) return undefined;
    return { type: "make_room", reason: "threshold", request, tokensBefore: estimate };
  }

  /**
   * After the provider refused `request` as too long, whatever the estimate said (the window configured is too
   * large, or the chain is older than its estimate): room is made once, keeping recent turns within a quarter
   * of what was refused; undefined when the round has had its chance or has no calls left.
   */
  afterOverflow(round: RoundState, request: LlmRequest, refused: InvokeFailure): MakeRoom | undefined {
    if (round.overflowCompacted || callsLeft(round) <= 0) return undefined;
    round.overflowCompacted = true;
    const { estimate } = round;
    return {
      type: "make_room",
      reason: "overflow",
      request,
      tokensBefore: estimate ?? round.window.tokens,
      ...(estimate === undefined ? {} : { refusedTokens: estimate }),
      refused,
    };
  }

  /** Compacts, and says what comes next: the call it made room for, composed again, or the round's failure. */
  async make(round: RoundState, step: MakeRoom): Promise<NextStep> {
    const { input } = round;
    const compacted = await this.#compact(round, step);
    if (!compacted.successful) return failed(compacted);
    if (compacted.result === undefined) {
      return step.reason === "overflow" ? failed(step.refused) : { type: "call_model", roomChecked: true };
    }
    if (step.reason === "threshold") {
      // The summary's call took the last the request may make: none is left for the call it made room for.
      if (callsLeft(round) <= 0) return failed(iterationLimit(round));
      const { tokensAfter } = compacted.result;
      if (tokensAfter > round.window.tokens) return failed(contextTooLarge(tokensAfter, round.window.tokens));
    } else {
      // The refused call's streamed text is not the answer.
      input.text?.reset();
    }
    // The turn's message is composed again: the chunks the old chain held are no longer held.
    if (round.firstCallOfTurn) {
      const { opening, session, progress, context } = input;
      const reopened = await this.composition.openRound(opening, session, progress.cursor, context);
      if (!reopened.successful) return failed(reopened);
      takeOpening(round, reopened.result);
    }
    return { type: "call_model", roomChecked: step.reason === "threshold" };
  }

  /**
   * Compacts the conversation before the round's next call, telling the stream; undefined when there was
   * nothing to compact.
   */
  async #compact(round: RoundState, step: MakeRoom): Promise<InvokeResult<Compacted | undefined>> {
    const { input } = round;
    const { session, progress } = input;
    const cursor = progress.cursor;
    const compacted = await this.compactor.compact({
      lease: input.lease,
      provider: input.provider,
      context: input.context,
      system: this.composition.systemMessage(input.context, round.sessionMode),
      principal: session.principal,
      sessionId: session.sessionId,
      turnId: input.turnId,
      cursor,
      unsent: [...cursor.pendingInput, ...round.newItems],
      inTurn: !round.firstCallOfTurn,
      calls: step.request,
      reason: step.reason,
      tokensBefore: step.tokensBefore,
      ...(step.reason === "overflow" && step.refusedTokens !== undefined
        ? { refusedTokens: step.refusedTokens }
        : {}),
      progress,
      maxCalls: callsLeft(round),
      ...(input.signal ? { signal: input.signal } : {}),
    });
    if (compacted.successful && compacted.result) {
      const { tokensBefore, tokensAfter, reason } = compacted.result.record;
      input.text?.compacted?.({ tokensBefore, tokensAfter, reason });
    }
    return compacted;
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
