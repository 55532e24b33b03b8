import {
  APPROVAL_TOOL_NAME,
  type ApprovalArguments,
  ApprovalResultSchema,
  type ToolResult,
} from "@aptix/contracts";
import type { ServerTool } from "../ports/server-tool.js";
import type { LlmToolCall } from "../records/llm-response.js";

/** The approval asked for `call` of `tool`, in the call's place and with its id (the protocol: @aptix/contracts). */
export function approvalCall(call: LlmToolCall, tool: ServerTool, argumentsJson: string): LlmToolCall {
  const args: ApprovalArguments = { tool: call.name, argumentsJson, server: tool.server ?? null };
  return { callId: call.callId, name: APPROVAL_TOOL_NAME, argumentsJson: JSON.stringify(args) };
}

/**
 * What the client answered: approved only by a `resultJson` of `{"approved": true}`; an `errorMessage` (a client
 * that does not know the call), `{"approved": false, "message": …}` or anything else declines, with its message.
 */
export function approvalOf(result: ToolResult | undefined): { approved: boolean; message?: string } {
  if (result?.resultJson === undefined) return { approved: false };
  let answer: unknown;
  try {
    answer = JSON.parse(result.resultJson);
  } catch {
    return { approved: false };
  }
  const read = ApprovalResultSchema.safeParse(answer);
  if (!read.success) return { approved: false };
  if (read.data.approved) return { approved: true };
  const message = read.data.message?.trim() ?? "";
  return message === "" ? { approved: false } : { approved: false, message };
}

/** The output the model gets for a call the user did not approve. */
export function declinedOutput(toolName: string, message?: string): string {
  const declined = `The user did not approve this call of ${toolName}.`;
  return message === undefined ? declined : `${declined} ${message}`;
}
