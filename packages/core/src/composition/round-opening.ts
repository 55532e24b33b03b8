import { fail, type InvokeResult, ok, type ToolResult, type UserTurnRequest } from "@aptix/contracts";
import { errorMessage } from "../error-message.js";
import type { ContextRetriever } from "../ports/context-retriever.js";
import type { LlmToolCall } from "../records/llm-response.js";
import type { RagChunk } from "../records/rag-chunk.js";
import type { SessionRecord } from "../records/session-record.js";
import type { FunctionCallOutputItem, TranscriptItem } from "../records/transcript-item.js";
import type { PendingToolCalls } from "../records/turn-record.js";
import { composeUserMessage } from "./user-message.js";

/** What opens a round, as Entry receives it: the user's request, or the client's results for a pending turn. */
export type RoundOpening =
  | { type: "user_turn"; request: UserTurnRequest }
  | { type: "tool_results"; toolResults: readonly ToolResult[]; pending: PendingToolCalls };

/**
 * The new items of a round's first LLM call. A user turn gets its `[CONTEXT]` chunks and its user message
 * (AGN-003 §3); a continuation gets the held server outputs and the client's results, in the order the model
 * made the calls. `session` is the session as the turn started it: mode and solution context already latched.
 * `modeInstructions` are those the user message must tell the model (see `modeInstructionsToTell`).
 */
export async function composeRoundOpening(
  opening: RoundOpening,
  session: SessionRecord,
  { retriever, modeInstructions }: { retriever?: ContextRetriever; modeInstructions?: string },
): Promise<InvokeResult<TranscriptItem[]>> {
  if (opening.type === "tool_results") {
    const clientOutputs: FunctionCallOutputItem[] = opening.toolResults.map((result) => ({
      type: "function_call_output",
      callId: result.toolCallId,
      output: result.errorMessage ?? result.resultJson ?? "null",
      isError: result.errorMessage !== undefined,
    }));
    const { calls, serverOutputs } = opening.pending;
    return ok(orderOutputs(calls, [...serverOutputs, ...clientOutputs]));
  }
  const { request } = opening;
  let chunks: RagChunk[] = [];
  if (retriever) {
    try {
      chunks = await retriever.retrieve({
        principal: session.principal,
        sessionId: session.sessionId,
        request,
        scope: request.ragScope ?? [],
      });
    } catch (error) {
      return fail("INTERNAL", `Context retrieval failed: ${errorMessage(error)}`);
    }
  }
  const { mode: modeId, solutionContextText } = session;
  return ok([composeUserMessage({ modeId, modeInstructions, request, chunks, solutionContextText })]);
}

/** Tool outputs go back in the order the model made the calls. */
export function orderOutputs(
  calls: readonly LlmToolCall[],
  outputs: readonly FunctionCallOutputItem[],
): FunctionCallOutputItem[] {
  const byCallId = new Map(outputs.map((output) => [output.callId, output]));
  return calls.flatMap((call) => byCallId.get(call.callId) ?? []);
}
