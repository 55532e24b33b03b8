/**
 * `@aptix/core/testing`: the in-memory adapters, a manual clock, a scripted LLM provider and record fixtures. No
 * test runner: the store contract suites are the repository's private `@aptix/testing-stores`.
 */
export { InMemoryFileStore } from "../in-memory/in-memory-file-store.js";
export { inMemorySessionStores } from "../in-memory/in-memory-session-stores.js";
export { InMemoryTurnEventLog } from "../in-memory/in-memory-turn-event-log.js";
export { InMemoryWorkspaceIndex } from "../in-memory/in-memory-workspace-index.js";
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
