export { PGLITE_SETTINGS } from "./create-pglite.js";
export { DrizzleFileStore } from "./drizzle-file-store.js";
export { DrizzleSessionStore, type StoreDatabase } from "./drizzle-session-store.js";
export { DrizzleTurnEventLog } from "./drizzle-turn-event-log.js";
export { DrizzleWorkspaceIndex, type DrizzleWorkspaceIndexOptions } from "./drizzle-workspace-index.js";
export {
  type AptixStore,
  DEFAULT_SCHEMA,
  MIGRATIONS_FOLDER,
  MIGRATIONS_TABLE,
  openPgliteStore,
  openStore,
  type Readiness,
  type StoreOptions,
} from "./open-store.js";
export * as schema from "./schema.js";
export { pgliteRunner, postgresRunner, type SqlRunner, type TransactionOptions } from "./sql-runner.js";
