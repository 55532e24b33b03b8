import type {
  ArgumentsCheck,
  ServerTool,
  ServerToolContext,
  ServerToolResult,
  ToolDefinition,
} from "@aptix/core";
import type { McpConnection } from "./mcp-connection.js";
import { mcpToolResult } from "./mcp-tool-result.js";

/** `<server>__<tool>` (docs/server-tools.md), kept within the providers' function-name rule. */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function mcpToolName(server: string, tool: string): string {
  return `${server}__${tool}`;
}

/**
 * One MCP tool as a core `ServerTool`. Its description and input schema are read live, so a
 * `tools/list_changed` reaches the next request; the server validates the arguments against its schema.
 */
export class McpServerTool implements ServerTool<Record<string, unknown>> {
  readonly #connection: McpConnection;
  readonly #tool: string;
  #last: ToolDefinition;

  /** `tool` is one of the connection's listed tools. */
  constructor(connection: McpConnection, tool: string) {
    this.#connection = connection;
    this.#tool = tool;
    const current = this.#current();
    if (!current) throw new Error(`MCP server ${connection.name} lists no tool ${JSON.stringify(tool)}`);
    this.#last = current;
  }

  /** The server's `approval` setting holds for each of its tools unless the configuration overrides it. */
  get approval(): "always" | "never" {
    return this.#connection.approval;
  }

  get server(): string {
    return this.#connection.name;
  }

  /** As last listed: a tool the server dropped keeps its last definition (its calls answer an error). */
  get definition(): ToolDefinition {
    this.#last = this.#current() ?? this.#last;
    return this.#last;
  }

  parseArguments(args: unknown): ArgumentsCheck<Record<string, unknown>> {
    // The step hands over JSON objects only; the MCP server checks them against its own schema.
    return { ok: true, value: args as Record<string, unknown> };
  }

  async execute(args: Record<string, unknown>, context: ServerToolContext): Promise<ServerToolResult> {
    if (!this.#connection.tools.has(this.#tool)) {
      return {
        errorMessage: `The MCP server ${this.#connection.name} no longer offers the tool ${this.#tool}.`,
      };
    }
    const result = await this.#connection.callTool(this.#tool, args, context.signal);
    return mcpToolResult(result, context.files);
  }

  #current(): ToolDefinition | undefined {
    const tool = this.#connection.tools.get(this.#tool);
    if (!tool) return undefined;
    return {
      name: mcpToolName(this.#connection.name, tool.name),
      description: tool.description ?? tool.title ?? `${tool.name} (MCP server ${this.#connection.name})`,
      parameters: tool.inputSchema as Record<string, unknown>,
      // No `strict`: sent in strict form when the server's schema has one (`wireParameters`), else as it is.
    };
  }
}
