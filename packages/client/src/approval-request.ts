import {
  type ApprovalArguments,
  ApprovalArgumentsSchema,
  type ApprovalResult,
  formatFieldPath,
  summarizeFieldErrors,
} from "@aptix/contracts";
import type { ToolHandler } from "./tool-handler.js";

/**
 * A server tool's call awaiting the user's approval (docs/server-tools.md), as `runTurn`'s `approve` gets it: the
 * `aptix_approve` call's arguments (`tool`, `argumentsJson`, `server`) and where it was asked.
 */
export interface ApprovalRequest extends ApprovalArguments {
  sessionId: string;
  turnId: string;
  toolCallId: string;
}

/** `true` runs the call; `false` or `{ approved: false, message }` declines it (the message reaches the model). */
export type ApprovalAnswer = boolean | ApprovalResult;

/**
 * The handler of `aptix_approve` that asks `approve`; without one, every call is declined, so a tool that asks
 * first never runs unseen. A call whose arguments cannot be read is declined too, never shown half-read.
 */
export function approvalHandler(
  approve: ((request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>) | undefined,
): ToolHandler {
  return async (args, context): Promise<ApprovalResult> => {
    if (approve === undefined) return { approved: false, message: "This client does not ask for approvals." };
    const read = ApprovalArgumentsSchema.safeParse(args);
    if (!read.success) {
      const problems = read.error.issues.map(({ path, message }) => ({
        path: formatFieldPath(path),
        message,
      }));
      return {
        approved: false,
        message: `Unreadable approval request: ${summarizeFieldErrors("arguments", problems)}`,
      };
    }
    const request: ApprovalRequest = {
      ...read.data,
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
