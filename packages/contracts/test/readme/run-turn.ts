import type { FinalResponse, ToolCall, ToolResult, UserTurnRequest } from "@aptix/contracts";
import { describeFailure } from "./describe-failure.js";
import { postExecute } from "./post-execute.js";

/**
 * Runs a user turn to its end: whenever the answer is a client_tool_continuation, runs its tool calls in order
 * and sends their results back, until the answer is final.
 */
export async function runTurn(
  baseUrl: string,
  turn: UserTurnRequest,
  runTool: (call: ToolCall) => Promise<ToolResult>,
): Promise<FinalResponse> {
  let answer = await postExecute(baseUrl, turn);
  for (;;) {
    if (!answer.successful) throw new Error(describeFailure(answer).join("\n"));
    const response = answer.result;
    switch (response.kind) {
      case "final":
        return response;
      case "client_tool_continuation": {
        // One result per call, same ids, same order (AGN-033 §3.3). A tool that fails still answers, with
        // `errorMessage` instead of `resultJson`; only the UI may show `toolContinuationMessage`.
        const toolResults: ToolResult[] = [];
        for (const call of response.toolCalls) toolResults.push(await runTool(call));
        answer = await postExecute(baseUrl, {
          sessionId: response.sessionId,
          turnId: response.turnId,
          toolResults,
        });
        break;
      }
    }
  }
}
