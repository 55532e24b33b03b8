import { z } from "zod";

/**
 * The client tool the service asks approvals with (docs/server-tools.md): a server tool's call that asks first
 * reaches the client as a call of this name, with the call's id. Never offered to a model; no catalog may name a
 * tool so.
 */
export const APPROVAL_TOOL_NAME = "aptix_approve";

/**
 * The arguments of an `aptix_approve` call (its `argumentsJson`, parsed): the call awaiting approval. Not strict,
 * so a field a later service adds does not make the call unreadable to an older client.
 */
export const ApprovalArgumentsSchema = z.object({
  /** The tool's name as the model called it (`<server>__<tool>` for an MCP tool). */
  tool: z.string().min(1),
  /** Its arguments as the service checked them: JSON text of an object, carried inside these arguments' JSON. */
  argumentsJson: z.string(),
  /** The MCP server it belongs to; null for a built-in tool. */
  server: z.string().nullable(),
});

export type ApprovalArguments = z.output<typeof ApprovalArgumentsSchema>;

/**
 * The client's answer to an `aptix_approve` call (its `resultJson`, parsed): only `approved: true` runs the call.
 * The `message` of a decline reaches the model. Any other answer, or an `errorMessage`, declines.
 */
export const ApprovalResultSchema = z.object({
  approved: z.boolean(),
  message: z.string().optional(),
});

export type ApprovalResult = z.output<typeof ApprovalResultSchema>;
