/** An MCP server could not be started, reached or initialised: start-up stops, naming it. */
export class McpServerUnavailableError extends Error {
  constructor(
    readonly server: string,
    reason: string,
  ) {
    super(`MCP server ${JSON.stringify(server)} is unavailable: ${reason}`);
    this.name = "McpServerUnavailableError";
  }
}
