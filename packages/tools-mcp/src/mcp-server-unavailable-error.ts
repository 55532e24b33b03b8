/**
 * An MCP server could not be started, reached or initialised, or its transport failed under a request. The
 * message names the server only, as clients and models may see it; `detail` (an address, a driver's words) is
 * for logs and operators: at start-up it is said with the server's name.
 */
export class McpServerUnavailableError extends Error {
  constructor(
    readonly server: string,
    readonly detail: string,
  ) {
    super(`MCP server ${JSON.stringify(server)} is unavailable`);
    this.name = "McpServerUnavailableError";
  }
}
