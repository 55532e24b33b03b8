import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  CallToolResultSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { McpLog } from "./mcp-log.js";
import type { McpServerConfig } from "./mcp-server-config.js";
import { McpServerUnavailableError } from "./mcp-server-unavailable-error.js";

export interface McpConnectionOptions {
  config: McpServerConfig;
  /** How the service introduces itself in the MCP handshake. */
  clientInfo: { name: string; version: string };
  /** The longest any request to the server may take (the SDK's own default is 60 s). */
  requestTimeoutMs: number;
  /**
   * The longest opening a connection may take: the transport, the `initialize` handshake and the tool list, at
   * start-up and again after a drop. Default `requestTimeoutMs`; a stdio server may need longer to start.
   */
  connectTimeoutMs?: number;
  log?: McpLog;
}

/**
 * One MCP server, through the SDK's `Client`: connected at start-up, its tools listed then and again on every
 * `notifications/tools/list_changed`. A connection that drops (a stdio server exits, an HTTP server restarts) is
 * opened again on the next call or ping. Failures below MCP are McpServerUnavailableError: their detail is
 * logged, never part of the message.
 */
export class McpConnection {
  readonly #options: McpConnectionOptions;
  #client: Client | undefined;
  #opening: Promise<Client> | undefined;
  #tools = new Map<string, Tool>();
  #closed = false;

  constructor(options: McpConnectionOptions) {
    this.#options = options;
  }

  get name(): string {
    return this.#options.config.name;
  }

  /** Whether its tools ask the user first (the server entry's `approval`). */
  get approval(): "always" | "never" {
    return this.#options.config.approval ?? "never";
  }

  /** Whether a connection is open now: false once it dropped or failed, until it is opened again. */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** The server's tools by their MCP name, as last listed. */
  get tools(): ReadonlyMap<string, Tool> {
    return this.#tools;
  }

  /** Opens the connection and lists the tools; McpServerUnavailableError names the server when it cannot. */
  async connect(): Promise<void> {
    await this.#connected();
  }

  /** Calls a tool; `signal` cancels it (the SDK tells the server with `notifications/cancelled`). */
  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const client = await this.#connected();
    const result = await this.#forgetOnTransportError(
      client,
      client.callTool({ name, arguments: args }, CallToolResultSchema, {
        signal,
        timeout: this.#options.requestTimeoutMs,
      }),
      signal,
    );
    return result as CallToolResult;
  }

  /** Resolves once the server answers a ping within `timeoutMs` (reconnecting first if it had dropped). */
  async ping(timeoutMs: number): Promise<void> {
    const client = await this.#connected();
    await this.#forgetOnTransportError(client, client.ping({ timeout: timeoutMs }));
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client ?? (await this.#opening?.catch(() => undefined));
    this.#client = undefined;
    await client?.close();
  }

  /**
   * A request that failed below MCP (an HTTP server that restarted and forgot the session, a refused
   * connection) leaves the client unusable: it is closed, so the next use connects afresh, and the failure is
   * McpServerUnavailableError. MCP errors (the server's answer, a timeout, a closed connection) and cancelled
   * calls leave it as it is.
   */
  async #forgetOnTransportError<T>(client: Client, request: Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      return await request;
    } catch (error) {
      if (error instanceof McpError || signal?.aborted) throw error;
      const detail = reasonOf(error);
      if (this.#client === client) {
        this.#client = undefined;
        this.#options.log?.(
          "warn",
          "MCP server request failed below MCP; it is connected again when next needed",
          { mcpServer: this.name, error: detail },
        );
        await client.close().catch(() => undefined);
      }
      throw new McpServerUnavailableError(this.name, detail);
    }
  }

  #connected(): Promise<Client> {
    if (this.#closed)
      return Promise.reject(new McpServerUnavailableError(this.name, "its connection is closed"));
    if (this.#client) return Promise.resolve(this.#client);
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #open(): Promise<Client> {
    const { config, clientInfo, requestTimeoutMs, log } = this.#options;
    const connectTimeoutMs = this.#options.connectTimeoutMs ?? requestTimeoutMs;
    const client = new Client(clientInfo, {
      listChanged: {
        tools: {
          autoRefresh: false,
          onChanged: () => {
            this.#listTools(client, requestTimeoutMs).then(
              (count) =>
                log?.("info", "MCP server changed its tools", { mcpServer: this.name, tools: count }),
              (error: unknown) =>
                log?.("warn", "MCP server changed its tools but they could not be listed", {
                  mcpServer: this.name,
                  error: reasonOf(error),
                }),
            );
          },
        },
      },
    });
    try {
      await client.connect(transportOf(config), { timeout: connectTimeoutMs });
      await this.#listTools(client, connectTimeoutMs);
    } catch (error) {
      await client.close().catch(() => undefined);
      const detail = reasonOf(error);
      log?.("warn", "MCP server could not be connected", { mcpServer: this.name, error: detail });
      throw new McpServerUnavailableError(this.name, detail);
    }
    client.onclose = () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      if (!this.#closed)
        log?.("warn", "MCP server connection closed; it is opened again when next needed", {
          mcpServer: this.name,
        });
    };
    if (this.#closed) {
      await client.close();
      throw new McpServerUnavailableError(this.name, "its connection is closed");
    }
    this.#client = client;
    return client;
  }

  /** Every page of `tools/list`; the new list replaces the old one at once. */
  async #listTools(client: Client, timeoutMs: number): Promise<number> {
    const tools = new Map<string, Tool>();
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
      for (const tool of page.tools) tools.set(tool.name, tool);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    this.#tools = tools;
    return tools.size;
  }
}

function transportOf(config: McpServerConfig): Transport {
  if (config.transport === "stdio") {
    return new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      // The SDK passes only what it is given: keep the safe defaults (PATH, HOME, …) beside the configured ones.
      env: { ...getDefaultEnvironment(), ...config.env },
      ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
      stderr: "inherit",
    });
  }
  return new StreamableHTTPClientTransport(new URL(config.url), {
    requestInit: { headers: config.headers ?? {} },
  });
}

/** The error's message with its cause (fetch hides ECONNREFUSED there); never the configuration's secrets. */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}
