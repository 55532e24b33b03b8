export { DEFAULT_CATALOG } from "./config/default-catalog.js";
export { loadCatalog } from "./config/load-catalog.js";
export { readServerEnv } from "./config/server-env.js";
export { createApp } from "./http/create-app.js";
export type { Jsonified } from "./http/openapi/session-view-schemas.js";
export { createLogger } from "./logging/create-logger.js";
export { silentLogger } from "./logging/silent-logger.js";
export { type RunningServer, startServer } from "./start-server.js";
