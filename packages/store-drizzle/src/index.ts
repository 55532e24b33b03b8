export { PGLITE_SETTINGS } from "./create-pglite.js";
export { DrizzleTurnEventLog } from "./domains/events.js";
export { DrizzleFileStore } from "./domains/files.js";
export type { StoreDatabase } from "./domains/rows.js";
export { DrizzleWorkspaceIndex, type DrizzleWorkspaceIndexOptions } from "./domains/workspaces/index.js";
export { type DrizzleSessionStoresOptions, drizzleSessionStores } from "./drizzle-session-stores.js";
export {
  type AptixStore,
  DEFAULT_SCHEMA,
  MIGRATIONS_FOLDER,
  MIGRATIONS_TABLE,
  openPgliteStore,
  openStore,
  type Readiness,
  type StoreOptions,
  type StoreStep,
} from "./open-store.js";
export { PreparedPglite } from "./prepared-pglite.js";
export * as schema from "./schema.js";
