export type { McpLog } from "./mcp-log.js";
export type { HttpMcpServerConfig, McpServerConfig, StdioMcpServerConfig } from "./mcp-server-config.js";
export { McpServerUnavailableError } from "./mcp-server-unavailable-error.js";
export { McpServers, type McpServersOptions } from "./mcp-servers.js";
export { type McpFileMention, mcpToolResult } from "./mcp-tool-result.js";
