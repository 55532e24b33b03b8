/**
 * `@aptix/testing-stores` (private): the contract suites every store implementation runs, as vitest suites. Call
 * one at the top level of a test file with a harness that makes the store under test afresh.
 */
export { describeFileStoreContract } from "./file-store-contract.js";
export { describeLeaseClockContract, type LeaseClockHarness } from "./lease-clock-contract.js";
export { describeSessionDirectoryContract } from "./session-directory-contract.js";
export { describeSessionStoreContract, type SessionStoreHarness } from "./session-store-contract.js";
export { describeTurnEventLogContract } from "./turn-event-log-contract.js";
export { describeTurnTransitionTable } from "./turn-transition-table.js";
export { describeWorkspaceIndexContract } from "./workspace-index-contract.js";
