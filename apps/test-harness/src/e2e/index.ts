/** End-to-end helpers: the real server over HTTP, on PGlite or Postgres, against the scripted OpenAI and Anthropic servers. */
export * from "./chromium.js";
export * from "./console-browser.js";
export * from "./event-stream.js";
export * from "./gated-answer.js";
export * from "./mcp-fixture.js";
export * from "./neutral-script.js";
export * from "./otlp-receiver.js";
export * from "./page-server.js";
export * from "./server-process.js";
export * from "./tenants-server.js";
export * from "./test-catalog.js";
export * from "./test-database.js";
export * from "./test-service.js";
export * from "./tool-outputs.js";
export * from "./webhook-receiver.js";
