// Adapters build on core alone (docs/architecture.md): the result envelope they answer in comes through here.
// Each name here is imported by another package's shipped code; what only tests and @aptix/testing-stores need
// is in `@aptix/core/testing`.
export { fail, type InvokeResult, ok } from "@aptix/contracts";
export { AgentCatalog } from "./catalog/agent-catalog.js";
export { CHANGE_MODE_TOOL_NAME } from "./catalog/change-mode-tool.js";
export { wireParameters } from "./catalog/strict-parameters.js";
export { randomIdGenerator } from "./defaults/random-id-generator.js";
export { sha256ContentHashService } from "./defaults/sha256-content-hash-service.js";
export { systemClock } from "./defaults/system-clock.js";
export { AgentService, DEFAULT_MAX_RUNNING_TURNS } from "./entry/agent-service.js";
export { WireTools } from "./llm-call/wire-tools.js";
export type { Clock } from "./ports/clock.js";
export type { ContextRetriever } from "./ports/context-retriever.js";
export type {
  DocumentPreparation,
  PrepareDocumentInput,
  PreparedDocument,
} from "./ports/document-preparation.js";
export type { Embedded, Embedder } from "./ports/embedder.js";
export type { FileStore, StoredFile } from "./ports/file-store.js";
export {
  CONTEXT_OVERFLOW,
  CONTINUATION_LOST,
  type LlmCallFailure,
  type LlmCallOptions,
  type LlmCallResult,
  type LlmProvider,
} from "./ports/llm-provider.js";
export { QuotaExceededError } from "./ports/quota-exceeded-error.js";
export type {
  ArgumentsCheck,
  ServerTool,
  ServerToolContext,
  ServerToolFiles,
  ServerToolResult,
} from "./ports/server-tool.js";
export type {
  DeleteSessionInput,
  DeleteSessionResult,
  FindIdleSessionsInput,
  FinishResponseDeletionsInput,
  ListSessionsInput,
  MessageTurn,
  ResponseDeletion,
  SessionDirectory,
  SessionListing,
  TakeResponseDeletionsInput,
} from "./ports/session-directory.js";
export type { SessionStores } from "./ports/session-stores.js";
export { isStoreUnavailable, StoreUnavailableError } from "./ports/store-unavailable-error.js";
export type { PruneTracesInput, TranscriptStore } from "./ports/transcript-store.js";
export type { AppendTurnEventsInput, PruneTurnEventsInput, TurnEventLog } from "./ports/turn-event-log.js";
export type { TurnObserver } from "./ports/turn-observer.js";
export type {
  FindExpiredLeasesInput,
  LlmCallWrite,
  RecordLlmCallInput,
  TurnState,
  TurnStore,
  TurnWrite,
  TurnWriteResult,
} from "./ports/turn-store.js";
export type { SumSessionUsageInput, SumUsageInput, UsageStore, UsageSum } from "./ports/usage-store.js";
export type {
  ClaimDeliveriesInput,
  ClaimedDelivery,
  DeliveryClaim,
  WebhookDelivery,
  WebhookOutbox,
} from "./ports/webhook-outbox.js";
export type {
  ChunkEmbedding,
  IndexDocumentInput,
  LexicalSearchInput,
  ScoredChunk,
  UpsertDocumentsInput,
  UpsertDocumentsOutcome,
  VectorSearchInput,
  WorkspaceIndex,
  WorkspaceKey,
  WorkspaceSummary,
} from "./ports/workspace-index.js";
export type { CompactionReason, CompactionRecord } from "./records/compaction-record.js";
export { type ConversationCursor, EMPTY_CURSOR } from "./records/conversation-cursor.js";
export type { LlmCallRecord } from "./records/llm-call-record.js";
export type { LlmRequest } from "./records/llm-request.js";
export type { LlmFinishReason, LlmResponse, LlmToolCall, LlmUsage } from "./records/llm-response.js";
export type { ModeHistoryEntry } from "./records/mode-history-entry.js";
export type { SessionKey, SessionPatch, SessionRecord, TurnKey } from "./records/session-record.js";
export type { ToolDefinition } from "./records/tool-definition.js";
export type { ContentPart, FunctionCallOutputItem, TranscriptItem } from "./records/transcript-item.js";
export type { StoredDelta } from "./records/turn-event.js";
export type {
  PendingToolCalls,
  ServerToolExecution,
  TurnPatch,
  TurnRecord,
  TurnRound,
  TurnStatus,
} from "./records/turn-record.js";
export { type UsageEntry, usageOf } from "./records/usage-entry.js";
export { WEBHOOK_EVENT_TYPES, type WebhookSubscription } from "./records/webhook-event.js";
export { codeSearchText } from "./retrieval/code-search-text.js";
export { prepareDocument } from "./retrieval/prepare-document.js";
export { WorkspaceKnowledge } from "./retrieval/workspace-knowledge.js";
export { createCreateFileTool } from "./server-tools/create-file-tool.js";
export { createKnowledgeSearchTool } from "./server-tools/knowledge-search-tool.js";
export { isMediaType, OPAQUE_MEDIA_TYPE } from "./server-tools/media-type.js";
export { PriceList } from "./usage/price-list.js";
export { UsageReports } from "./usage/usage-reports.js";
