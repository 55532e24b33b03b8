import {
  type InvokeResult,
  ok,
  type RetrievalTrace,
  type ToolResult,
  type UserTurnRequest,
} from "@aptix/contracts";
import type { RetrievalSettings } from "../catalog/conversation-context.js";
import type { ContextRetriever } from "../ports/context-retriever.js";
import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { LlmToolCall } from "../records/llm-response.js";
import type { SessionRecord } from "../records/session-record.js";
import type { FunctionCallOutputItem, TranscriptItem } from "../records/transcript-item.js";
import type { PendingToolCalls } from "../records/turn-record.js";
import { retrieveTurnContext, type TurnContext } from "./turn-context.js";
import { composeUserMessage } from "./user-message.js";

/** What opens a round, as Entry receives it: the user's request, or the client's results for a pending turn. */
export type RoundOpening =
  | { type: "user_turn"; request: UserTurnRequest }
  | { type: "tool_results"; toolResults: readonly ToolResult[]; pending: PendingToolCalls };

/** A round's opening as composed: its new items and, for a user turn, what its retrieval did. */
export interface OpenedRound {
  items: TranscriptItem[];
  /** A user turn's retrieval trace (absent without a retriever). */
  retrieval?: RetrievalTrace;
  /** A user turn's workspace and sent chunks, for the cursor once the provider holds its message. */
  held?: TurnContext["held"];
}

export interface RoundOpeningOptions {
  retriever?: ContextRetriever;
  /** Where the round starts: the session's last workspace and what the provider holds. */
  cursor: ConversationCursor;
  retrieval: RetrievalSettings;
  modeInstructions?: string;
}

/**
 * The new items of a round's first LLM call. A user turn gets its `[CONTEXT]` chunks and its user message
 * (AGN-003 §3); a continuation gets the held server outputs and the client's results, in the order the model
 * made the calls. `session` is the session as the turn started it: mode and solution context already latched.
 * `modeInstructions` are those the user message must tell the model (see `modeInstructionsToTell`).
 */
export async function composeRoundOpening(
  opening: RoundOpening,
  session: SessionRecord,
  { retriever, cursor, retrieval, modeInstructions }: RoundOpeningOptions,
): Promise<InvokeResult<OpenedRound>> {
  if (opening.type === "tool_results") {
    const clientOutputs: FunctionCallOutputItem[] = opening.toolResults.map((result) => ({
      type: "function_call_output",
      callId: result.toolCallId,
      output: result.errorMessage ?? result.resultJson ?? "null",
      isError: result.errorMessage !== undefined,
    }));
    const { calls, serverOutputs } = opening.pending;
    return ok({ items: orderOutputs(calls, [...serverOutputs, ...clientOutputs]) });
  }
  const { request } = opening;
  const context = await retrieveTurnContext({
    retriever,
    principal: session.principal,
    sessionId: session.sessionId,
    request,
    cursor,
    settings: retrieval,
  });
  if (!context.successful) return context;
  const { contextBlock, trace, held } = context.result;
  const { mode: modeId, solutionContextText } = session;
  const message = composeUserMessage({
    modeId,
    request,
    solutionContextText,
    ...(modeInstructions !== undefined ? { modeInstructions } : {}),
    ...(contextBlock !== undefined ? { contextBlock } : {}),
  });
  return ok({ items: [message], held, ...(trace ? { retrieval: trace } : {}) }, context.warnings);
}

/** Tool outputs go back in the order the model made the calls. */
export function orderOutputs(
  calls: readonly LlmToolCall[],
  outputs: readonly FunctionCallOutputItem[],
): FunctionCallOutputItem[] {
  const byCallId = new Map(outputs.map((output) => [output.callId, output]));
  return calls.flatMap((call) => byCallId.get(call.callId) ?? []);
}
