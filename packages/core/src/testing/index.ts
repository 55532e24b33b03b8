/**
 * `@aptix/core/testing`: the in-memory adapters, a manual clock, record fixtures and the contract suites every
 * store implementation runs (they import `vitest`, an optional peer dependency of this package).
 */
export {
  type FixedContextChunk,
  InMemoryContextRetriever,
  type InMemoryContextRetrieverOptions,
} from "../in-memory/in-memory-context-retriever.js";
export { InMemoryFileStore } from "../in-memory/in-memory-file-store.js";
export { InMemorySessionStore } from "../in-memory/in-memory-session-store.js";
export { InMemoryTurnEventLog } from "../in-memory/in-memory-turn-event-log.js";
export { InMemoryWorkspaceIndex } from "../in-memory/in-memory-workspace-index.js";
export { describeFileStoreContract, type FileStoreHarness } from "./file-store-contract.js";
export { describeLeaseClockContract, type LeaseClockHarness } from "./lease-clock-contract.js";
export { MANUAL_CLOCK_START, ManualClock } from "./manual-clock.js";
export type { ScenarioStoreFactory, ScenarioStores } from "./scenario-stores.js";
export { type ScriptedAnswer, ScriptedLlmProvider, type ScriptedStep } from "./scripted-llm-provider.js";
export {
  describeSessionStoreContract,
  type SessionStoreContractOptions,
  type SessionStoreHarness,
} from "./session-store-contract.js";
export {
  claimSessionFor,
  FIXTURE_SESSION,
  FIXTURE_TIME,
  fixtureHash,
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
} from "./store-fixtures.js";
export { describeTurnEventLogContract, type TurnEventLogHarness } from "./turn-event-log-contract.js";
export { describeTurnTransitionTable } from "./turn-transition-table.js";
export {
  describeWorkspaceIndexContract,
  type WorkspaceIndexContractOptions,
  type WorkspaceIndexHarness,
} from "./workspace-index-contract.js";
