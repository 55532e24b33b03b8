import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { HttpMcpServerConfig, StdioMcpServerConfig } from "@aptix/tools-mcp";

/** The fixture MCP server (`fixtures/mcp-server.mjs`): tools `echo`, `report`, `fail`, `hang`, `exit` and `retitle`. */
const MCP_FIXTURE_PATH = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "fixtures",
  "mcp-server.mjs",
);

/** An `mcpServers` entry running the fixture over stdio; with `token`, it only starts when its env carries it. */
export function stdioMcpFixture(name: string, token?: string): StdioMcpServerConfig {
  return {
    name,
    transport: "stdio",
    command: process.execPath,
    args: [MCP_FIXTURE_PATH, ...(token ? ["--require-token"] : [])],
    ...(token ? { env: { MCP_FIXTURE_TOKEN: token } } : {}),
  };
}

export interface HttpMcpFixture {
  /** The streamable HTTP endpoint. */
  url: string;
  /** An `mcpServers` entry for it, sending the token it requires (if any) as a bearer header. */
  config(name: string): HttpMcpServerConfig;
  /** How many pings the fixture has answered (all sessions). */
  pings(): Promise<number>;
  /** How many calls of each tool the fixture has received (all sessions), by the tool's MCP name. */
  calls(): Promise<Record<string, number>>;
  /** Kills the fixture and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts the fixture over streamable HTTP on a loopback port (`port`, else a free one); with `token`, it answers
 * 401 without it.
 */
export async function startHttpMcpFixture(
  options: { token?: string; port?: number } = {},
): Promise<HttpMcpFixture> {
  const port = options.port === undefined ? [] : ["--port", String(options.port)];
  const child: ChildProcess = spawn(process.execPath, [MCP_FIXTURE_PATH, "--http", ...port], {
    env: { ...process.env, ...(options.token ? { MCP_FIXTURE_TOKEN: options.token } : {}) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const url = await new Promise<string>((resolve, reject) => {
    lines.once("line", (line) => resolve((JSON.parse(line) as { listening: string }).listening));
    child.once("exit", (code) => reject(new Error(`the MCP fixture exited (${code}) before listening`)));
  });
  return {
    url,
    config: (name) => ({
      name,
      transport: "http",
      url,
      ...(options.token ? { headers: { Authorization: `Bearer ${options.token}` } } : {}),
    }),
    async pings() {
      const answer = await fetch(new URL("/pings", url));
      return ((await answer.json()) as { pings: number }).pings;
    },
    async calls() {
      const answer = await fetch(new URL("/calls", url));
      return ((await answer.json()) as { calls: Record<string, number> }).calls;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
