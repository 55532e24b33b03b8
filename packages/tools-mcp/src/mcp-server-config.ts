/** An MCP server the service starts as a child process and speaks to over its stdin and stdout. */
export interface StdioMcpServerConfig {
  name: string;
  transport: "stdio";
  command: string;
  args?: string[];
  /** Added to a minimal inherited environment (PATH, HOME, …); may hold secrets, which are never logged. */
  env?: Record<string, string>;
  cwd?: string;
}

/** An MCP server reached over streamable HTTP. */
export interface HttpMcpServerConfig {
  name: string;
  transport: "http";
  url: string;
  /** Sent with every request (e.g. `Authorization`); may hold secrets, which are never logged. */
  headers?: Record<string, string>;
}

/** One entry of the configuration's `mcpServers`. */
export type McpServerConfig = StdioMcpServerConfig | HttpMcpServerConfig;
