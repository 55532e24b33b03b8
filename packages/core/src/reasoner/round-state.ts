import { fail } from "@aptix/contracts";
import type { ContextWindow } from "../composition/context-window.js";
import type { OpenedRound } from "../composition/round-opening.js";
import type { HeldContext } from "../records/conversation-cursor.js";
import type { TranscriptItem } from "../records/transcript-item.js";
import type { Budgets } from "../usage/budgets.js";
import type { ReasonerInput } from "./reasoner-step.js";

/** What the Reasoner's loop carries from one step to the next within a round. */
export interface RoundState {
  readonly input: ReasonerInput;
  /** The items the next call adds: the round's opening, then the outputs of the last call's tool calls. */
  newItems: TranscriptItem[];
  /** The session's mode as the round's mode changes move it; the turn keeps its own (`input.mode`). */
  sessionMode: string;
  /** What the provider holds once the turn's user message is sent: its mode, workspace and context chunks. */
  heldByTurn: HeldContext;
  /** Stays true until a call of this round is answered: a replay after a lost continuation is still the first call. */
  firstCallOfTurn: boolean;
  /** The last call's continuation was lost: the next replays the transcript, and a second loss fails. */
  continuationLost: boolean;
  /** A provider's overflow answer makes room and calls again once; a second is the turn's failure. */
  overflowCompacted: boolean;
  /** The estimate the last call was judged by (docs/context-window.md), when the chain's size is known. */
  estimate: number | undefined;
  readonly window: ContextWindow;
  /** `progress.llmCallCount` when the request began: its calls are counted from there, summaries included. */
  readonly firstCall: number;
  readonly maxLlmCalls: number;
}

/** The user turn's opening as composed (again, after a compaction): the next call sends it. */
export function takeOpening(round: RoundState, opened: OpenedRound): void {
  round.newItems = opened.items;
  round.heldByTurn = { mode: round.input.mode.id, ...opened.held };
}

/** The LLM calls the request may still make, summarising calls included. */
export function callsLeft(round: RoundState): number {
  return round.maxLlmCalls - (round.input.progress.llmCallCount - round.firstCall);
}

export function iterationLimit({ maxLlmCalls }: RoundState) {
  return fail(
    "ITERATION_LIMIT_EXCEEDED",
    `The request made ${maxLlmCalls} LLM calls (summaries included) without a final answer or a client tool call.`,
    { maxLlmCalls },
  );
}

/** The turn's failure when a budget of its principal is spent (its text so far in the details); else undefined. */
export function budgetSpent(budgets: Budgets | undefined, input: ReasonerInput, textSoFar: string) {
  return budgets?.refusal(input.session.principal, "the turn ended before its next LLM call.", {
    turnId: input.turnId,
    ...(textSoFar === "" ? {} : { partialText: textSoFar }),
  });
}
