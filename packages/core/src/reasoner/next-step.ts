import type { InvokeFailure } from "@aptix/contracts";
import type { ConversationCursor, HeldContext } from "../records/conversation-cursor.js";
import type { LlmRequest } from "../records/llm-request.js";
import type { LlmFinishReason, LlmResponse, LlmToolCall } from "../records/llm-response.js";
import type { PendingToolCalls } from "../records/turn-record.js";
import type { AnswerText } from "./answer-text.js";

/**
 * What one step of the Reasoner's loop says comes next; the loop in `ReasonerStep.run` applies it. Each step
 * answers the next, until one that ends the round (`final_answer`, `hand_to_client`, `fail`).
 */
export type NextStep =
  | CallModel
  /** The model answered with text: the round's final answer (the welcome of a mode the turn changed to first). */
  | { type: "final_answer"; text: string; finishReason: LlmFinishReason }
  /** The model asked for tools: the server's run, the others are routed. */
  | { type: "run_server_tools"; call: AnsweredCall }
  /**
   * Calls the client runs: the round ends and its turn waits for their results. A call that asks the user
   * first is one of them (the approval request is a client call), with its original call in `pending.approvals`.
   */
  | { type: "hand_to_client"; text: string; clientCalls: LlmToolCall[]; pending: PendingToolCalls }
  | MakeRoom
  | { type: "fail"; failure: InvokeFailure };

/**
 * Compose the round's next call and send it. `roomChecked`: room was just made for it, so it is not judged
 * against the window again (it goes as composed, even past the threshold).
 */
export interface CallModel {
  type: "call_model";
  roomChecked?: boolean;
}

/** The conversation does not fit the next call: compact it (docs/context-window.md), then call. */
export type MakeRoom = {
  type: "make_room";
  /** The call it makes room for: the summary's call sends the conversation with its tools and cache key. */
  request: LlmRequest;
  /** The estimate of that call. */
  tokensBefore: number;
} & (
  | { reason: "threshold" }
  /** The provider refused the call as too long; `refused` is the round's failure when nothing can be compacted. */
  | { reason: "overflow"; refusedTokens?: number; refused: InvokeFailure }
);

/** A call the model answered, as the steps after it need it. */
export interface AnsweredCall {
  request: LlmRequest;
  response: LlmResponse;
  /** The cursor the call was sent from. */
  cursor: ConversationCursor;
  /** What the provider holds once it has this call's input. */
  held: HeldContext;
  /** The call's answer as streamed, with the welcome it opened with. */
  text: AnswerText;
}

/** The step that ends the round with `failure`. */
export function failed(failure: InvokeFailure): NextStep {
  return { type: "fail", failure };
}
