/**
 * `@aptix/tools-mcp` against the fixture MCP server as a real process, over stdio and over streamable HTTP:
 * tools listed at connection and again on `tools/list_changed`, calls, cancellation, closing.
 */

import { type ServerTool, type ServerToolContext, sha256ContentHashService } from "@aptix/core";
import { FileKeeper, InMemoryFileStore } from "@aptix/core/testing";
import { type McpLog, McpServers } from "@aptix/tools-mcp";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type HttpMcpFixture, startHttpMcpFixture, stdioMcpFixture } from "../../src/e2e/index.js";

let http: HttpMcpFixture;

beforeAll(async () => {
  http = await startHttpMcpFixture({ token: "header-token-0123" });
});

afterAll(async () => {
  await http?.stop();
});

function connect(log?: McpLog) {
  return McpServers.connect({
    servers: [stdioMcpFixture("repo", "env-token-0123"), http.config("docs")],
    clientInfo: { name: "aptix-test", version: "0.0.0" },
    requestTimeoutMs: 5_000,
    ...(log ? { log } : {}),
  });
}

function contextFor(signal = new AbortController().signal): ServerToolContext {
  const keeper = new FileKeeper({
    store: new InMemoryFileStore(),
    hashing: sha256ContentHashService,
    ids: { newId: (prefix) => `${prefix}_1` },
    clock: { now: () => new Date() },
  });
  return {
    principal: "alice",
    sessionId: "s",
    turnId: "t",
    mode: "general",
    signal,
    files: {
      maxBytes: keeper.maxBytes,
      keep: (file) => keeper.keep({ principal: "alice", sessionId: "s", turnId: "t" }, file),
    },
  };
}

const toolNamed = (servers: McpServers, name: string): ServerTool => {
  const tool = servers.tools.find((each) => each.definition.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
};

describe("McpServers over stdio and streamable HTTP", () => {
  it("lists every server's tools as <server>__<tool> with their descriptions and own schemas", async () => {
    const servers = await connect();
    try {
      const names = servers.tools.map((tool) => tool.definition.name);
      expect(names).toEqual([
        "repo__echo",
        "repo__report",
        "repo__fail",
        "repo__hang",
        "repo__exit",
        "repo__retitle",
        "docs__echo",
        "docs__report",
        "docs__fail",
        "docs__hang",
        "docs__exit",
        "docs__retitle",
      ]);
      expect(toolNamed(servers, "docs__echo").definition).toEqual({
        name: "docs__echo",
        description: "Echo the text back.",
        parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      });
      await servers.refresh(1_000);
      expect(servers.down()).toEqual([]);
    } finally {
      await servers.close();
    }
  });

  it("calls tools on both transports and maps their results", async () => {
    const servers = await connect();
    try {
      for (const server of ["repo", "docs"]) {
        const echo = toolNamed(servers, `${server}__echo`);
        expect(await echo.execute({ text: server }, contextFor())).toEqual({ result: `echo: ${server}` });
        expect(await toolNamed(servers, `${server}__fail`).execute({}, contextFor())).toEqual({
          errorMessage: "the fixture failed on purpose",
        });
      }
    } finally {
      await servers.close();
    }
  });

  it("keeps a resource whose media type is no media type as application/octet-stream", async () => {
    const servers = await connect();
    try {
      const report = await toolNamed(servers, "docs__report").execute(
        { mimeType: "text/html\r\nX-Injected: yes" },
        contextFor(),
      );
      expect(report).toEqual({
        result: {
          text: "The report is attached.",
          files: [expect.objectContaining({ name: "summary.txt", mimeType: "application/octet-stream" })],
        },
      });
    } finally {
      await servers.close();
    }
  });

  it("lists the tools again when the server says they changed", async () => {
    const servers = await connect();
    try {
      const echo = toolNamed(servers, "docs__echo");
      await toolNamed(servers, "docs__retitle").execute({ description: "Echo, retitled." }, contextFor());
      await vi.waitFor(() => expect(echo.definition.description).toBe("Echo, retitled."), { timeout: 5_000 });
      expect(echo.definition.name).toBe("docs__echo");
    } finally {
      await servers.close();
    }
  });

  it("stops a call when its signal aborts, and the connection goes on", async () => {
    const servers = await connect();
    try {
      const abort = new AbortController();
      const hanging = toolNamed(servers, "repo__hang").execute({}, contextFor(abort.signal));
      abort.abort(new Error("too slow"));
      await expect(hanging).rejects.toThrow(/too slow/);
      expect(await toolNamed(servers, "repo__echo").execute({ text: "still here" }, contextFor())).toEqual({
        result: "echo: still here",
      });
    } finally {
      await servers.close();
    }
  });

  it("starts a stdio server again when its process stopped, at the next call", async () => {
    const messages: string[] = [];
    const servers = await connect((_level, message) => messages.push(message));
    try {
      expect(await toolNamed(servers, "repo__exit").execute({}, contextFor())).toEqual({ result: "bye" });
      await vi.waitFor(() =>
        expect(messages).toContain("MCP server connection closed; it is opened again when next needed"),
      );
      expect(await toolNamed(servers, "repo__echo").execute({ text: "again" }, contextFor())).toEqual({
        result: "echo: again",
      });
      await servers.refresh(1_000);
      expect(servers.down()).toEqual([]);
    } finally {
      await servers.close();
    }
  });

  it("connects within connectTimeoutMs, not the request timeout: a server may start slower than a call may take", async () => {
    const options = {
      servers: [stdioMcpFixture("slow", "env-token-0123")],
      clientInfo: { name: "aptix-test", version: "0.0.0" },
    };
    // No process starts and answers `initialize` in a millisecond: the connect timeout is what start-up waits.
    await expect(
      McpServers.connect({ ...options, requestTimeoutMs: 5_000, connectTimeoutMs: 1 }),
    ).rejects.toThrow(/MCP server "slow" is unavailable/);
    const servers = await McpServers.connect({ ...options, requestTimeoutMs: 1, connectTimeoutMs: 15_000 });
    try {
      expect(servers.down()).toEqual([]);
      expect(servers.tools.map((tool) => tool.definition.name)).toContain("slow__echo");
    } finally {
      await servers.close();
    }
  });

  it("connects again to an HTTP server that restarted and forgot the session", async () => {
    const first = await startHttpMcpFixture();
    let second: HttpMcpFixture | undefined;
    const servers = await McpServers.connect({
      servers: [first.config("flaky")],
      clientInfo: { name: "aptix-test", version: "0.0.0" },
      requestTimeoutMs: 5_000,
    });
    try {
      expect(servers.down()).toEqual([]);
      await first.stop();
      // A refresh finds the connection gone: the server is down until a refresh connects it again.
      await servers.refresh(1_000);
      expect(servers.down()).toEqual(["flaky"]);
      second = await startHttpMcpFixture({ port: Number(new URL(first.url).port) });
      // The first refresh after the restart may still use the forgotten session; the next one connects afresh.
      await vi.waitFor(
        async () => {
          await servers.refresh(1_000);
          expect(servers.down()).toEqual([]);
        },
        { timeout: 5_000 },
      );
      expect(await toolNamed(servers, "flaky__echo").execute({ text: "back" }, contextFor())).toEqual({
        result: "echo: back",
      });
    } finally {
      await servers.close();
      await second?.stop();
    }
  });

  it("fails calls once closed", async () => {
    const servers = await connect();
    await servers.close();
    await expect(toolNamed(servers, "repo__echo").execute({ text: "x" }, contextFor())).rejects.toThrow(
      /MCP server "repo" is unavailable$/,
    );
  });
});
