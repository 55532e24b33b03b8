import {
  createCreateFileTool,
  createKnowledgeSearchTool,
  type ServerTool,
  type WorkspaceKnowledge,
} from "@aptix/core";
import { McpServers, McpServerUnavailableError } from "@aptix/tools-mcp";
import type { Logger } from "pino";
import type { CatalogConfig } from "../config/catalog-config-schema.js";
import { ConfigError } from "../config/config-error.js";

/** How long a background readiness refresh waits for each MCP server's ping. */
const MCP_PING_TIMEOUT_MS = 2_000;

export interface ConfiguredServerToolsOptions {
  /** The longest one tool call (or any MCP request) may take. */
  toolTimeoutMs: number;
  /** The longest connecting to an MCP server may take (`APTIX_MCP_CONNECT_TIMEOUT_MS`). */
  connectTimeoutMs: number;
  logger: Logger;
  /** What `knowledge_search` searches: the workspace index of the workspace routes. */
  knowledge: Pick<WorkspaceKnowledge, "search">;
}

/**
 * The server tools the config declares (DESIGN §8): its `serverTools` built-ins and the tools of its `mcpServers`,
 * connected here. A server that cannot be started or reached stops start-up (ConfigError naming it).
 */
export class ConfiguredServerTools {
  readonly tools: ServerTool[];
  readonly #mcp: McpServers | undefined;

  private constructor(tools: ServerTool[], mcp: McpServers | undefined) {
    this.tools = tools;
    this.#mcp = mcp;
  }

  static async connect(
    config: CatalogConfig,
    options: ConfiguredServerToolsOptions,
  ): Promise<ConfiguredServerTools> {
    const builtins = (config.serverTools ?? []).map(({ name, builtin }): ServerTool => {
      const tool =
        builtin === "create_file"
          ? createCreateFileTool(name)
          : createKnowledgeSearchTool(options.knowledge, name);
      return tool as ServerTool;
    });
    const servers = config.mcpServers ?? [];
    if (servers.length === 0) return new ConfiguredServerTools(builtins, undefined);
    try {
      const mcp = await McpServers.connect({
        servers,
        clientInfo: { name: "aptix", version: "1.0.0" },
        requestTimeoutMs: options.toolTimeoutMs,
        connectTimeoutMs: options.connectTimeoutMs,
        // Fields name servers and tools only: a server's env and headers may hold secrets.
        log: (level, message, fields) => options.logger[level](fields ?? {}, message),
      });
      return new ConfiguredServerTools([...builtins, ...mcp.tools], mcp);
    } catch (error) {
      if (!(error instanceof McpServerUnavailableError)) throw error;
      const index = servers.findIndex((server) => server.name === error.server);
      // The operator starting the service is told why, address and all.
      throw new ConfigError(
        `APTIX_CONFIG: mcpServers[${index}] (${JSON.stringify(error.server)}): ${error.message}: ${error.detail}`,
      );
    }
  }

  /** Pings the MCP servers, connecting again those that dropped: run in the background, never per request. */
  async refresh(): Promise<void> {
    await this.#mcp?.refresh(MCP_PING_TIMEOUT_MS);
  }

  /** The MCP servers without an open connection now, by name. */
  down(): string[] {
    return this.#mcp?.down() ?? [];
  }

  /** Closes the MCP connections (stopping stdio servers). */
  async close(): Promise<void> {
    await this.#mcp?.close();
  }
}
