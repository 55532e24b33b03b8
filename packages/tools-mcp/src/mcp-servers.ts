import type { ServerTool } from "@aptix/core";
import { McpConnection } from "./mcp-connection.js";
import type { McpLog } from "./mcp-log.js";
import type { McpServerConfig } from "./mcp-server-config.js";
import { MCP_TOOL_NAME, McpServerTool, mcpToolName } from "./mcp-server-tool.js";

export interface McpServersOptions {
  servers: readonly McpServerConfig[];
  /** How the service introduces itself in the MCP handshake. */
  clientInfo: { name: string; version: string };
  /** The longest a request to a server may take; the service's tool timeout. */
  requestTimeoutMs: number;
  /** The longest connecting to a server (transport, handshake, tool list) may take; default `requestTimeoutMs`. */
  connectTimeoutMs?: number;
  log?: McpLog;
}

/**
 * The configured MCP servers (docs/server-tools.md): all connected at start-up, or none (the first that cannot be reached
 * stops start-up, naming it). Their tools become server tools named `<server>__<tool>`.
 */
export class McpServers {
  readonly #connections: McpConnection[];
  readonly tools: ServerTool[];

  private constructor(connections: McpConnection[], log: McpLog | undefined) {
    this.#connections = connections;
    this.tools = [];
    for (const connection of connections) {
      for (const tool of connection.tools.keys()) {
        const name = mcpToolName(connection.name, tool);
        if (MCP_TOOL_NAME.test(name)) this.tools.push(new McpServerTool(connection, tool) as ServerTool);
        else
          log?.("warn", "MCP tool skipped: its name does not fit [A-Za-z0-9_-]{1,64}", {
            mcpServer: connection.name,
            tool,
          });
      }
    }
  }

  /** Connects every server and lists its tools; throws McpServerUnavailableError naming a server that fails. */
  static async connect(options: McpServersOptions): Promise<McpServers> {
    const connections = options.servers.map(
      (config) =>
        new McpConnection({
          config,
          clientInfo: options.clientInfo,
          requestTimeoutMs: options.requestTimeoutMs,
          ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
          ...(options.log ? { log: options.log } : {}),
        }),
    );
    const opened = await Promise.allSettled(connections.map((connection) => connection.connect()));
    const failed = opened.find((outcome) => outcome.status === "rejected");
    if (failed) {
      await Promise.all(connections.map((connection) => connection.close()));
      throw failed.reason;
    }
    for (const connection of connections) {
      options.log?.("info", "MCP server connected", {
        mcpServer: connection.name,
        tools: connection.tools.size,
      });
    }
    return new McpServers(connections, options.log);
  }

  /**
   * Pings every server within `timeoutMs`, connecting again those whose connection dropped: what keeps
   * `down()` true to the servers between calls. Failures only change the connections' state (and are logged).
   */
  async refresh(timeoutMs: number): Promise<void> {
    await Promise.allSettled(this.#connections.map((connection) => connection.ping(timeoutMs)));
  }

  /** The names of the servers without an open connection now, in configuration order; costs nothing. */
  down(): string[] {
    return this.#connections
      .filter((connection) => !connection.connected)
      .map((connection) => connection.name);
  }

  /** Closes every connection (stops stdio servers); for shutdown. */
  async close(): Promise<void> {
    await Promise.all(this.#connections.map((connection) => connection.close()));
  }
}
