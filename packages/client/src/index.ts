export type { ApprovalAnswer, ApprovalRequest } from "./approval-request.js";
export { AptixClient, type CallOptions, type UsageOptions } from "./aptix-client.js";
export type { AptixClientOptions } from "./aptix-client-options.js";
export { AptixProtocolError } from "./aptix-protocol-error.js";
export type { AptixResult, AptixResultError } from "./aptix-result.js";
export type { FileContent } from "./file-content.js";
export type {
  SessionListJson,
  SessionMessagesJson,
  SessionSummaryJson,
  TurnSummaryJson,
  TurnTraceJson,
  WorkspaceSummaryJson,
} from "./lenient-schemas.js";
export type { RetryOptions } from "./retry-options.js";
export type { RunTurnOptions } from "./run-turn-options.js";
export type { PageOptions, SessionsApi } from "./sessions-api.js";
export type { ToolContext, ToolHandler } from "./tool-handler.js";
export type { TurnStreamEvent } from "./turn-stream-event.js";
export type { WorkspacesApi, WorkspaceUpsert } from "./workspaces-api.js";
