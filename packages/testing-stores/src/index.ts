/**
 * `@aptix/testing-stores` (private): the contract suites every store implementation runs, as vitest suites, one
 * per port. Call one at the top level of a test file with a harness that makes the stores under test afresh.
 */
export { describeFileStoreContract } from "./file-store-contract.js";
export { describeLeaseClockContract, type LeaseClockHarness } from "./lease-clock-contract.js";
export { describeSessionDirectoryContract } from "./session-directory-contract.js";
export type { SessionStoresHarness } from "./session-stores-harness.js";
export { describeTranscriptStoreContract } from "./transcript-store-contract.js";
export { describeTurnEventLogContract } from "./turn-event-log-contract.js";
export { describeTurnStoreContract } from "./turn-store-contract.js";
export { describeTurnTransitionTable } from "./turn-transition-table.js";
export { describeUsageStoreContract } from "./usage-store-contract.js";
export { describeWebhookOutboxContract } from "./webhook-outbox-contract.js";
export { describeWorkspaceIndexContract } from "./workspace-index-contract.js";
