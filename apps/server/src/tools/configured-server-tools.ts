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
 * The server tools the config declares (docs/server-tools.md): its `serverTools` built-ins and the tools of its `mcpServers`,
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
    const entries = config.serverTools ?? [];
    const builtins = entries.flatMap(({ name, builtin, approval }): ServerTool[] => {
      if (builtin === undefined) return [];
      const tool = (
        builtin === "create_file"
          ? createCreateFileTool(name)
          : createKnowledgeSearchTool(options.knowledge, name)
      ) as ServerTool;
      return [approval === undefined ? tool : { ...tool, approval }];
    });
    const servers = config.mcpServers ?? [];
    const mcp = servers.length === 0 ? undefined : await connectMcp(servers, options);
    try {
      const mcpTools = (mcp?.tools ?? []).map((tool) => withApproval(tool, entries));
      entries.forEach(({ name, builtin }, index) => {
        if (builtin === undefined && !mcpTools.some((tool) => tool.definition.name === name)) {
          throw new ConfigError(
            `APTIX_CONFIG: serverTools[${index}].name: no MCP server offers a tool ${JSON.stringify(name)} (an entry without \`builtin\` names one, as <server>__<tool>)`,
          );
        }
      });
      return new ConfiguredServerTools([...builtins, ...mcpTools], mcp);
    } catch (error) {
      await mcp?.close();
      throw error;
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

/** Connects the MCP servers; one that cannot be started or reached stops start-up, named. */
async function connectMcp(
  servers: NonNullable<CatalogConfig["mcpServers"]>,
  options: ConfiguredServerToolsOptions,
): Promise<McpServers> {
  try {
    return await McpServers.connect({
      servers,
      clientInfo: { name: "aptix", version: "1.0.0" },
      requestTimeoutMs: options.toolTimeoutMs,
      connectTimeoutMs: options.connectTimeoutMs,
      // Fields name servers and tools only: a server's env and headers may hold secrets.
      log: (level, message, fields) => options.logger[level](fields ?? {}, message),
    });
  } catch (error) {
    if (!(error instanceof McpServerUnavailableError)) throw error;
    const index = servers.findIndex((server) => server.name === error.server);
    // The operator starting the service is told why, address and all.
    throw new ConfigError(
      `APTIX_CONFIG: mcpServers[${index}] (${JSON.stringify(error.server)}): ${error.message}: ${error.detail}`,
    );
  }
}

/**
 * An MCP tool with the approval a `serverTools` entry naming it sets, over its server's: a view of the same tool,
 * so its definition stays live.
 */
function withApproval(tool: ServerTool, entries: NonNullable<CatalogConfig["serverTools"]>): ServerTool {
  const entry = entries.find(({ name, builtin }) => builtin === undefined && name === tool.definition.name);
  if (entry?.approval === undefined) return tool;
  return {
    get definition() {
      return tool.definition;
    },
    approval: entry.approval,
    ...(tool.server === undefined ? {} : { server: tool.server }),
    parseArguments: (args) => tool.parseArguments(args),
    execute: (args, context) => tool.execute(args, context),
  };
}
