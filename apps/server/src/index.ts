export { type CatalogConfig, catalogConfigSchema } from "./config/catalog-config-schema.js";
export { ConfigError } from "./config/config-error.js";
export { DEFAULT_CATALOG } from "./config/default-catalog.js";
export { loadCatalog } from "./config/load-catalog.js";
export { readServerEnv, type ServerEnv } from "./config/server-env.js";
export { type AppOptions, createApp } from "./http/create-app.js";
export type { Jsonified } from "./http/session-view-schemas.js";
export { jsonLogger, type Logger, silentLogger } from "./logging/logger.js";
export { type RunningServer, startServer } from "./start-server.js";
