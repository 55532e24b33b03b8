/** Where the MCP client reports what an operator should see; the server passes its logger's `log`. */
export type McpLog = (
  level: "info" | "warn" | "error",
  message: string,
  fields?: Record<string, unknown>,
) => void;
