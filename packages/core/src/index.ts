// Adapters build on core alone (docs/architecture.md): the result envelope they answer in comes through here.
export { fail, type InvokeFailure, type InvokeResult, ok } from "@aptix/contracts";
export { AgentCatalog, type AgentCatalogConfig } from "./catalog/agent-catalog.js";
export { type ConversationContext, DEFAULT_MODE_ID } from "./catalog/conversation-context.js";
export type { Mode } from "./catalog/mode.js";
export { ModeCatalog } from "./catalog/mode-catalog.js";
export { randomIdGenerator } from "./defaults/random-id-generator.js";
export { sha256ContentHashService } from "./defaults/sha256-content-hash-service.js";
export { systemClock } from "./defaults/system-clock.js";
export { requestHash } from "./lifecycle/request-hash.js";
export { toolResultsMismatch } from "./lifecycle/tool-results-mismatch.js";
export { InMemoryContextRetriever } from "./memory/in-memory-context-retriever.js";
export { InMemoryFileStore } from "./memory/in-memory-file-store.js";
export { InMemorySessionStore } from "./memory/in-memory-session-store.js";
export { InMemoryTurnEventLog } from "./memory/in-memory-turn-event-log.js";
export { type ConversationCursor, EMPTY_CURSOR, isFreshCursor } from "./model/conversation-cursor.js";
export type { LlmCallRecord, TracedContinuation } from "./model/llm-call-record.js";
export type { LlmContinuation, LlmRequest, ToolChoice } from "./model/llm-request.js";
export type { LlmFinishReason, LlmResponse, LlmToolCall, LlmUsage } from "./model/llm-response.js";
export type { ModeHistoryEntry } from "./model/mode-history-entry.js";
export type { RagChunk } from "./model/rag-chunk.js";
export type { SessionKey, SessionPatch, SessionRecord } from "./model/session-record.js";
export type { ToolDefinition } from "./model/tool-definition.js";
export type * from "./model/transcript-item.js";
export {
  deltaEvent,
  type EventPosition,
  parseEventId,
  resultEvent,
  type StoredDelta,
  type TurnEvent,
} from "./model/turn-event.js";
export type {
  PendingToolCalls,
  ServerToolExecution,
  TurnPatch,
  TurnRecord,
  TurnRound,
  TurnStatus,
} from "./model/turn-record.js";
export {
  AgentService,
  type AgentServiceOptions,
  DEFAULT_EVENT_RETENTION_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_LLM_CALLS_PER_REQUEST,
  type ExecuteOptions,
} from "./pipeline/agent-service.js";
export {
  type CompositionInput,
  CompositionStep,
  needsReplay,
} from "./pipeline/composition/composition-step.js";
export { formatRagContextBlock } from "./pipeline/composition/rag-context-block.js";
export type { RoundOpening } from "./pipeline/composition/round-opening.js";
export { composeUserMessage } from "./pipeline/composition/user-message.js";
export { LlmCallStep } from "./pipeline/llm-call-step.js";
export type { PipelineStep } from "./pipeline/pipeline-step.js";
export { type ReasonerOutcome, ReasonerStep } from "./pipeline/reasoner-step.js";
export { ServerToolExecutionStep } from "./pipeline/server-tool-execution-step.js";
export type { SessionSummary, TurnSummary, TurnTrace } from "./pipeline/views.js";
export type { Clock } from "./ports/clock.js";
export type { ContentHashService } from "./ports/content-hash-service.js";
export type { ContextRetriever, RetrievalQuery } from "./ports/context-retriever.js";
export type { FileStore, StoredFile } from "./ports/file-store.js";
export type { IdGenerator } from "./ports/id-generator.js";
export {
  CONTINUATION_LOST,
  isContinuationLost,
  type LlmCallOptions,
  type LlmProvider,
} from "./ports/llm-provider.js";
export type * from "./ports/session-store.js";
export { isStoreUnavailable, StoreUnavailableError } from "./ports/store-unavailable-error.js";
export type { PruneTurnEventsInput, TurnEventLog } from "./ports/turn-event-log.js";
export {
  CHANGE_MODE_TOOL_NAME,
  type ChangeModeArguments,
  type ChangeModeResult,
  createChangeModeTool,
} from "./tools/change-mode-tool.js";
export type {
  ArgumentsCheck,
  ProducedFile,
  ServerTool,
  ServerToolContext,
  ServerToolResult,
} from "./tools/server-tool.js";
export { ServerToolRegistry } from "./tools/server-tool-registry.js";
