// Adapters build on core alone (docs/architecture.md): the result envelope they answer in comes through here.
export { fail, type InvokeResult, ok } from "@aptix/contracts";
export { AgentCatalog, type AgentCatalogConfig } from "./catalog/agent-catalog.js";
export { CHANGE_MODE_TOOL_NAME } from "./catalog/change-mode-tool.js";
export type { ConversationContext } from "./catalog/conversation-context.js";
export type { Mode } from "./catalog/mode.js";
export { ModeCatalog } from "./catalog/mode-catalog.js";
export { ServerToolRegistry } from "./catalog/server-tool-registry.js";
export { wireParameters } from "./catalog/strict-parameters.js";
export { randomIdGenerator } from "./defaults/random-id-generator.js";
export { sha256ContentHashService } from "./defaults/sha256-content-hash-service.js";
export { systemClock } from "./defaults/system-clock.js";
// For the transition table of @aptix/testing-stores, which runs every combination through decideTransition and
// through TurnAdmission (over TurnPersistence) on a store, and stores reaped turns with interruptedFailure.
export { type Admission, TurnAdmission } from "./entry/admission.js";
export {
  AgentService,
  type AgentServiceOptions,
  DEFAULT_EVENT_RETENTION_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_RUNNING_TURNS,
} from "./entry/agent-service.js";
export { decideTransition } from "./entry/decide-transition.js";
export { requestHash } from "./entry/request-hash.js";
export type { SessionSummary, TurnTrace } from "./entry/views.js";
export { type FixedContextChunk, InMemoryContextRetriever } from "./in-memory/in-memory-context-retriever.js";
export { InMemoryFileStore } from "./in-memory/in-memory-file-store.js";
export { inMemorySessionStores } from "./in-memory/in-memory-session-stores.js";
export { InMemoryWorkspaceIndex } from "./in-memory/in-memory-workspace-index.js";
export { interruptedFailure } from "./lifecycle/turn-endings.js";
export { WireTools } from "./llm-call/wire-tools.js";
export { TurnPersistence } from "./persistence/turn-persistence.js";
export type { Clock } from "./ports/clock.js";
export type { ContentHashService } from "./ports/content-hash-service.js";
export type { ContextRetriever } from "./ports/context-retriever.js";
export type * from "./ports/document-preparation.js";
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
  KeptFile,
  ProducedFile,
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
/** @public The observer port and what it is given (the server names the `Observed*` types inline only). */
export type {
  CompactionResult,
  ObservedCompaction,
  ObservedLlmCall,
  ObservedRetrieval,
  ObservedRound,
  ObservedToolRun,
  ToolRunResult,
  TurnObserver,
} from "./ports/turn-observer.js";
export type {
  FindExpiredLeasesInput,
  Lease,
  LlmCallWrite,
  RecordLlmCallInput,
  TurnState,
  TurnStore,
  TurnWrite,
  TurnWriteResult,
} from "./ports/turn-store.js";
export type { SumSessionUsageInput, SumUsageInput, UsageStore, UsageSum } from "./ports/usage-store.js";
export type * from "./ports/workspace-index.js";
/**
 * @public No package imports it by name, but the declarations tsc emits for store-drizzle's schema (the
 * `llm_calls.request` column's type) name it.
 */
export type { CompactionReason, CompactionRecord } from "./records/compaction-record.js";
export { type ConversationCursor, EMPTY_CURSOR } from "./records/conversation-cursor.js";
export type { LlmCallRecord } from "./records/llm-call-record.js";
export type { LlmRequest } from "./records/llm-request.js";
export type { LlmFinishReason, LlmResponse, LlmToolCall, LlmUsage } from "./records/llm-response.js";
export type { ModeHistoryEntry } from "./records/mode-history-entry.js";
export type { RagChunk } from "./records/rag-chunk.js";
export type { SessionKey, SessionPatch, SessionRecord, TurnKey } from "./records/session-record.js";
export type { ToolDefinition } from "./records/tool-definition.js";
export type * from "./records/transcript-item.js";
export type { StoredDelta, TurnEvent } from "./records/turn-event.js";
export type {
  PendingToolCalls,
  ServerToolExecution,
  TurnPatch,
  TurnRecord,
  TurnRound,
  TurnStatus,
} from "./records/turn-record.js";
export { type UsageEntry, usageOf } from "./records/usage-entry.js";
export { chunkDocument } from "./retrieval/chunk-document.js";
export { codeQueryTerms, codeSearchText } from "./retrieval/code-search-text.js";
export type { DocumentChunk } from "./retrieval/document-chunk.js";
export { languageOf } from "./retrieval/language-of.js";
export { prepareDocument } from "./retrieval/prepare-document.js";
export { WorkspaceKnowledge } from "./retrieval/workspace-knowledge.js";
export { createCreateFileTool } from "./server-tools/create-file-tool.js";
export { FileKeeper } from "./server-tools/file-keeper.js";
export { createKnowledgeSearchTool } from "./server-tools/knowledge-search-tool.js";
export { isMediaType, OPAQUE_MEDIA_TYPE } from "./server-tools/media-type.js";
export { FOLLOW_PAGE_DELTAS } from "./streaming/shared-turn-reads.js";
export { MAX_QUEUED_EVENTS } from "./streaming/turn-event-queue.js";
export type { BudgetsOptions } from "./usage/budgets.js";
export { PriceList } from "./usage/price-list.js";
export { UsageReports } from "./usage/usage-reports.js";
