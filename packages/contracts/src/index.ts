export { contractJsonSchemas } from "./json-schema.js";
export { DEFAULT_REQUEST_LIMITS, FIELD_LENGTH_LIMITS, type RequestLimits } from "./limits.js";
export {
  type AgentExecuteRequest,
  AgentExecuteRequestSchema,
  createAgentExecuteRequestSchema,
  createAgentExecuteRequestValidator,
  isToolContinuationRequest,
  validateAgentExecuteRequest,
} from "./request/agent-execute-request.js";
export { CLIPBOARD_IMAGE_MIME_TYPES, type ClipboardImage } from "./request/clipboard-image.js";
export type { InputArtifact } from "./request/input-artifact.js";
export { RAG_SCOPE_OPERATORS, type RagScopeCondition } from "./request/rag-scope-condition.js";
export type { ToolContinuationRequest } from "./request/tool-continuation-request.js";
export type { ToolResult } from "./request/tool-result.js";
export {
  MULTITASK_STRATEGIES,
  USER_TURN_INPUT_FIELDS,
  type UserTurnRequest,
} from "./request/user-turn-request.js";
export {
  type AgentExecuteResponse,
  AgentExecuteResponseSchema,
  AgentExecuteResultSchema,
  type ClientToolContinuationResponse,
  ClientToolContinuationResponseSchema,
  type FinalResponse,
  FinalResponseSchema,
  validateAgentExecuteResponse,
} from "./response/agent-execute-response.js";
export { type ExecutedToolResult, ExecutedToolResultSchema } from "./response/executed-tool-result.js";
export { type FileRef, FileRefSchema } from "./response/file-ref.js";
export { type ToolCall, ToolCallSchema } from "./response/tool-call.js";
export { type Usage, UsageSchema } from "./response/usage.js";
export { type UserWarning, UserWarningSchema } from "./response/user-warning.js";
export { ERROR_CODES, ERROR_HTTP_STATUS, type ErrorCode, httpStatusOf } from "./result/error-code.js";
export { type InvokeError, InvokeErrorSchema } from "./result/invoke-error.js";
export {
  fail,
  type InvokeFailure,
  type InvokeResult,
  type InvokeSuccess,
  invokeResultSchema,
  ok,
} from "./result/invoke-result.js";
export { type InvokeWarning, InvokeWarningSchema } from "./result/invoke-warning.js";
export { WARNING_CODES, type WarningCode } from "./result/warning-code.js";
export { type ModeList, ModeListSchema } from "./session/mode-list.js";
export {
  RETRIEVAL_OUTCOMES,
  type RetrievalOutcome,
  type RetrievalTrace,
  RetrievalTraceSchema,
} from "./session/retrieval-trace.js";
export {
  type SessionForkRequest,
  SessionForkRequestSchema,
  type SessionRewindRequest,
  SessionRewindRequestSchema,
  type TurnRegenerateRequest,
  TurnRegenerateRequestSchema,
  validateSessionForkRequest,
  validateSessionRewindRequest,
  validateTurnRegenerateRequest,
} from "./session/session-branches.js";
export {
  SESSION_PAGE_LIMITS,
  SESSION_TITLE_LENGTH,
  type SessionCompacted,
  SessionCompactedSchema,
  type SessionDeleted,
  SessionDeletedSchema,
  type SessionList,
  type SessionListItem,
  SessionListQuerySchema,
  SessionListSchema,
  type SessionMessage,
  type SessionMessages,
  SessionMessagesQuerySchema,
  SessionMessagesSchema,
  validateSessionListQuery,
  validateSessionMessagesQuery,
} from "./session/session-lists.js";
export {
  type SessionSummary,
  SessionSummarySchema,
  TURN_STATUSES,
  type TurnStatus,
  type TurnSummary,
  TurnSummarySchema,
  type TurnTrace,
  TurnTraceSchema,
} from "./session/session-views.js";
export { type TurnEvent, TurnEventSchema } from "./session/turn-event.js";
export {
  type TurnAccepted,
  TurnAcceptedSchema,
  type TurnStateView,
  TurnStateViewSchema,
} from "./session/turn-state-view.js";
export { IdentifierSchema } from "./text/identifier.js";
export {
  APPROVAL_TOOL_NAME,
  type ApprovalArguments,
  ApprovalArgumentsSchema,
  type ApprovalResult,
  ApprovalResultSchema,
} from "./tools/approval-tool.js";
export { type ClientToolDefinition, defaultClientTools } from "./tools/default-client-tools.js";
export {
  type SessionUsage,
  type UsageQuery,
  UsageQuerySchema,
  type UsageReport,
  UsageReportSchema,
  validateUsageQuery,
} from "./usage/usage-report.js";
export { type FieldError, formatFieldPath } from "./validation/field-error.js";
export { summarizeFieldErrors } from "./validation/to-field-errors.js";
export { WORKSPACE_LIMITS } from "./workspace/workspace-limits.js";
export {
  type DeleteWorkspaceDocumentsRequest,
  DeleteWorkspaceDocumentsRequestSchema,
  type PutWorkspaceDocumentsRequest,
  PutWorkspaceDocumentsRequestSchema,
  validateDeleteWorkspaceDocumentsRequest,
  validatePutWorkspaceDocumentsRequest,
  validateWorkspaceId,
  validateWorkspaceSearchRequest,
  type WorkspaceDocument,
  WorkspaceDocumentSchema,
  WorkspaceIdSchema,
  type WorkspaceSearchRequest,
  WorkspaceSearchRequestSchema,
} from "./workspace/workspace-requests.js";
export {
  type DeleteWorkspaceDocumentsResponse,
  DeleteWorkspaceDocumentsResponseSchema,
  type DropWorkspaceResponse,
  DropWorkspaceResponseSchema,
  type PutWorkspaceDocumentsResponse,
  PutWorkspaceDocumentsResponseSchema,
  type WorkspaceSearchChunk,
  WorkspaceSearchChunkSchema,
  type WorkspaceSearchResponse,
  WorkspaceSearchResponseSchema,
  type WorkspaceSummary,
  WorkspaceSummarySchema,
} from "./workspace/workspace-responses.js";
