import type { ToolResult } from "@aptix/contracts";
import type { ServerTool } from "../ports/server-tool.js";
import type { LlmToolCall } from "../records/llm-response.js";

/**
 * The client call that stands for a server tool's call awaiting the user's approval (docs/server-tools.md). Never offered to
 * a model, and no catalog may name a tool so.
 */
export const APPROVAL_TOOL_NAME = "aptix_approve";

/** The approval asked for `call` of `tool`, in the call's place and with its id: `{ tool, argumentsJson, server }`. */
export function approvalCall(call: LlmToolCall, tool: ServerTool, argumentsJson: string): LlmToolCall {
  return {
    callId: call.callId,
    name: APPROVAL_TOOL_NAME,
    argumentsJson: JSON.stringify({ tool: call.name, argumentsJson, server: tool.server ?? null }),
  };
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
  if (typeof answer !== "object" || answer === null) return { approved: false };
  const { approved, message } = answer as { approved?: unknown; message?: unknown };
  if (approved === true) return { approved: true };
  return typeof message === "string" && message.trim() !== ""
    ? { approved: false, message: message.trim() }
    : { approved: false };
}

/** The output the model gets for a call the user did not approve. */
export function declinedOutput(toolName: string, message?: string): string {
  const declined = `The user did not approve this call of ${toolName}.`;
  return message === undefined ? declined : `${declined} ${message}`;
}
