/** What every MCP server entry may say, whatever its transport. */
interface McpServerCommonConfig {
  name: string;
  /** `always`: each call of its tools runs only once the user approved it (docs/server-tools.md); default `never`. */
  approval?: "always" | "never";
}

/** An MCP server the service starts as a child process and speaks to over its stdin and stdout. */
export interface StdioMcpServerConfig extends McpServerCommonConfig {
  transport: "stdio";
  command: string;
  args?: string[];
  /** Added to a minimal inherited environment (PATH, HOME, …); may hold secrets, which are never logged. */
  env?: Record<string, string>;
  cwd?: string;
}

/** An MCP server reached over streamable HTTP. */
export interface HttpMcpServerConfig extends McpServerCommonConfig {
  transport: "http";
  url: string;
  /** Sent with every request (e.g. `Authorization`); may hold secrets, which are never logged. */
  headers?: Record<string, string>;
}

/** One entry of the configuration's `mcpServers`. */
export type McpServerConfig = StdioMcpServerConfig | HttpMcpServerConfig;
