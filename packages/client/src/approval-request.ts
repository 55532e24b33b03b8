import type { ToolHandler } from "./tool-handler.js";

/** A server tool's call awaiting the user's approval (docs/server-tools.md), as `runTurn`'s `approve` gets it. */
export interface ApprovalRequest {
  /** The tool's name as the model called it (`<server>__<tool>` for an MCP tool). */
  tool: string;
  /** Its arguments, as the service checked them (JSON text of an object). */
  argumentsJson: string;
  /** The MCP server it belongs to; null for a built-in tool. */
  server: string | null;
  sessionId: string;
  turnId: string;
  toolCallId: string;
}

/** `true` runs the call; `false` or `{ approved: false, message }` declines it (the message reaches the model). */
export type ApprovalAnswer = boolean | { approved: boolean; message?: string };

/** The client tool the service asks approvals with. */
export const APPROVAL_TOOL_NAME = "aptix_approve";

/**
 * The handler of `aptix_approve` that asks `approve`; without one, every call is declined, so a tool that asks
 * first never runs unseen.
 */
export function approvalHandler(
  approve: ((request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>) | undefined,
): ToolHandler {
  return async (args, context) => {
    if (approve === undefined) return { approved: false, message: "This client does not ask for approvals." };
    const request: ApprovalRequest = {
      tool: String(args.tool),
      argumentsJson: typeof args.argumentsJson === "string" ? args.argumentsJson : "{}",
      server: typeof args.server === "string" ? args.server : null,
      sessionId: context.sessionId,
      turnId: context.turnId,
      toolCallId: context.toolCallId,
    };
    const answer = await approve(request);
    if (typeof answer === "boolean") return { approved: answer };
    return answer.message === undefined
      ? { approved: answer.approved }
      : { approved: answer.approved, message: answer.message };
  };
}
