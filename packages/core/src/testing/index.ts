/**
 * `@aptix/core/testing`: the in-memory adapters, a manual clock, a scripted LLM provider and record fixtures, and
 * the parts of core that only tests and the store contract suites (the repository's private
 * `@aptix/testing-stores`) drive or name directly. No test runner.
 */
// The transition table of @aptix/testing-stores runs every combination through decideTurnRequest and through
// TurnAdmission (over TurnPersistence) on a store, and stores reaped turns with interruptedFailure.
export { type Admission, TurnAdmission } from "../entry/admission.js";
export type { AgentServiceOptions } from "../entry/agent-service.js";
export { decideTurnRequest } from "../entry/decide-turn.js";
export { requestHash } from "../entry/request-hash.js";
/** The trace route's answer, which the end-to-end harness reads. */
export type { TurnTrace } from "../entry/views.js";
export { InMemoryFileStore } from "../in-memory/in-memory-file-store.js";
export { inMemorySessionStores } from "../in-memory/in-memory-session-stores.js";
export { InMemoryTurnEventLog } from "../in-memory/in-memory-turn-event-log.js";
export { InMemoryWorkspaceIndex } from "../in-memory/in-memory-workspace-index.js";
export { interruptedFailure } from "../lifecycle/turn-endings.js";
export { TurnPersistence } from "../persistence/turn-persistence.js";
export type { KeptFile, ProducedFile } from "../ports/server-tool.js";
export type { Lease } from "../ports/turn-store.js";
export type { IndexChunkInput } from "../ports/workspace-index.js";
export { chunkDocument } from "../retrieval/chunk-document.js";
export { codeQueryTerms } from "../retrieval/code-search-text.js";
export { FileKeeper } from "../server-tools/file-keeper.js";
export { FOLLOW_PAGE_DELTAS } from "../streaming/shared-turn-reads.js";
export { MAX_QUEUED_EVENTS } from "../streaming/turn-event-queue.js";
export type { BudgetsOptions } from "../usage/budgets.js";
export { ManualClock } from "./manual-clock.js";
export type { ScenarioStoreFactory } from "./scenario-stores.js";
export { type ScriptedAnswer, ScriptedLlmProvider } from "./scripted-llm-provider.js";
export {
  claimSessionFor,
  FIXTURE_TIME,
  newCallRecord,
  newContinuationResult,
  newCursor,
  newFailedCallRecord,
  newFailureResult,
  newFileRef,
  newFinalResult,
  newLease,
  newModeHistoryEntry,
  newPendingToolCalls,
  newRound,
  newSessionKey,
  newStoredFile,
  newTurnRecord,
  sampleTranscriptItems,
  startTurnFor,
  writeTurnWhileLeaseHeld,
} from "./store-fixtures.js";
