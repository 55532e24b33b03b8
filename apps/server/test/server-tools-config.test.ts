import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ok } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/config/config-error.js";
import { DEFAULT_CATALOG } from "../src/config/default-catalog.js";
import { loadCatalog } from "../src/config/load-catalog.js";
import { readServerEnv } from "../src/config/server-env.js";
import { silentLogger } from "../src/logging/silent-logger.js";
import { ConfiguredServerTools } from "../src/tools/configured-server-tools.js";

function configFile(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), "aptix-config-")), "config.json");
  writeFileSync(path, JSON.stringify(content));
  return path;
}

/** Loads the catalog as the server does: with the server tools the config declares. */
function load(config: unknown) {
  return loadCatalog(configFile(config), undefined, async (checked) => {
    const tools = await ConfiguredServerTools.connect(checked, {
      toolTimeoutMs: 1_000,
      connectTimeoutMs: 10_000,
      logger: silentLogger,
      knowledge: { search: async () => ok([]) },
    });
    return tools.tools;
  });
}

async function problem(config: unknown): Promise<string> {
  const error = await load(config).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).message;
}

const withGeneralTools = (tools: string[], extra: Record<string, unknown>) => ({
  ...DEFAULT_CATALOG,
  modes: DEFAULT_CATALOG.modes.map((mode) => ({ ...mode, tools: [...mode.tools, ...tools] })),
  ...extra,
});

describe("serverTools, mcpServers and files in APTIX_CONFIG", () => {
  it("offers configured built-ins under their configured names", async () => {
    const { catalog, config } = await load(
      withGeneralTools(["make_file", "search"], {
        serverTools: [
          { name: "make_file", builtin: "create_file" },
          { name: "search", builtin: "knowledge_search" },
        ],
        files: { ttlSeconds: 60 },
      }),
    );
    expect(catalog.serverTools.get("make_file")?.definition).toMatchObject({
      name: "make_file",
      strict: true,
    });
    // Its schema has optional fields: no strictness named, so it is sent in strict form (wireParameters).
    const search = catalog.serverTools.get("search")?.definition;
    expect(search?.name).toBe("search");
    expect(search?.strict).toBeUndefined();
    expect(catalog.toolsFor(catalog.modes.get("general")).map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["make_file", "search"]),
    );
    expect(config.files).toEqual({ ttlSeconds: 60 });
  });

  it("names each bad key", async () => {
    const message = await problem({
      ...DEFAULT_CATALOG,
      serverTools: [
        { name: "create_file", builtin: "make_coffee" },
        { name: "a.b", builtin: "create_file" },
      ],
      mcpServers: [
        { name: "repo__x", transport: "stdio", command: "node" },
        { name: "docs", transport: "http", url: "ftp://example.com/mcp" },
        { name: "docs", transport: "http", url: "http://127.0.0.1:1/mcp", headers: { Authorization: 1 } },
        { name: "other", transport: "websocket" },
      ],
      files: { ttlSeconds: 0, maxBytes: 1.5, keep: true },
    });
    for (const expected of [
      "serverTools[0].builtin:",
      "serverTools[1].name: must be 1–64 characters",
      "mcpServers[0].name: must not contain '__'",
      "mcpServers[1].url: must be an http(s) URL",
      "mcpServers[2].headers.Authorization:",
      "mcpServers[3].transport:",
      "files.ttlSeconds:",
      "files.maxBytes:",
      "files.keep: is not a known key",
    ]) {
      expect(message).toContain(expected);
    }
  });

  it("stops when a name is both a client tool and a server tool", async () => {
    const clientTool = DEFAULT_CATALOG.clientTools[0];
    if (!clientTool) throw new Error("the default catalog has no client tool");
    const message = await problem({
      ...DEFAULT_CATALOG,
      serverTools: [{ name: clientTool.name, builtin: "create_file" }],
    });
    expect(message).toContain(`clientTools[0].name: is the name of a server tool (${clientTool.name})`);
  });

  it("stops when a server tool or an MCP server is declared twice, or a server tool shadows agent_change_mode", async () => {
    expect(
      await problem({
        ...DEFAULT_CATALOG,
        serverTools: [
          { name: "files", builtin: "create_file" },
          { name: "files", builtin: "create_file" },
        ],
      }),
    ).toContain('serverTools[1].name: repeats "files"');
    expect(
      await problem({
        ...DEFAULT_CATALOG,
        mcpServers: [
          { name: "docs", transport: "http", url: "http://127.0.0.1:1/mcp" },
          { name: "docs", transport: "stdio", command: "node" },
        ],
      }),
    ).toContain('mcpServers[1].name: repeats "docs"');
    expect(
      await problem({
        ...DEFAULT_CATALOG,
        serverTools: [{ name: "agent_change_mode", builtin: "create_file" }],
      }),
    ).toContain('server tool "agent_change_mode" is declared twice');
  });
});

describe("approval in serverTools and mcpServers (docs/server-tools.md)", () => {
  it("makes a built-in ask first when its entry says so, and leaves the others to run on the model's word", async () => {
    const { catalog } = await load(
      withGeneralTools(["make_file", "search"], {
        serverTools: [
          { name: "make_file", builtin: "create_file", approval: "always" },
          { name: "search", builtin: "knowledge_search" },
        ],
      }),
    );
    expect(catalog.serverTools.get("make_file")?.approval).toBe("always");
    expect(catalog.serverTools.get("search")?.approval).toBeUndefined();
  });

  it("names the entry that is neither a built-in nor an MCP tool's approval, and a bad approval", async () => {
    const message = await problem({
      ...DEFAULT_CATALOG,
      serverTools: [
        { name: "make_file" },
        { name: "search", builtin: "knowledge_search", approval: "sometimes" },
      ],
      mcpServers: [{ name: "docs", transport: "http", url: "http://127.0.0.1:1/mcp", approval: "ask" }],
    });
    for (const expected of [
      "serverTools[0].builtin: is required unless the entry sets the `approval` of an MCP server's tool",
      "serverTools[1].approval:",
      "mcpServers[0].approval:",
    ]) {
      expect(message).toContain(expected);
    }
  });

  it("stops when an approval entry names a tool no MCP server offers", async () => {
    expect(
      await problem({ ...DEFAULT_CATALOG, serverTools: [{ name: "repo__deploy", approval: "always" }] }),
    ).toBe(
      'APTIX_CONFIG: serverTools[0].name: no MCP server offers a tool "repo__deploy" (an entry without `builtin` names one, as <server>__<tool>)',
    );
  });
});

describe("APTIX_PUBLIC_URL and APTIX_TOOL_TIMEOUT_MS", () => {
  it("defaults to the listen address and 30 s", () => {
    const env = readServerEnv({});
    expect(env.APTIX_PUBLIC_URL).toBeUndefined();
    expect(env.APTIX_TOOL_TIMEOUT_MS).toBe(30_000);
    expect(readServerEnv({ APTIX_PUBLIC_URL: "https://agent.example.com/aptix" }).APTIX_PUBLIC_URL).toBe(
      "https://agent.example.com/aptix",
    );
  });

  it("refuses a url that is not http(s) or has a query, and a timeout below 1 ms", () => {
    expect(() => readServerEnv({ APTIX_PUBLIC_URL: "agent.example.com" })).toThrow(
      'APTIX_PUBLIC_URL="agent.example.com": must be an http(s) URL',
    );
    expect(() => readServerEnv({ APTIX_PUBLIC_URL: "https://agent.example.com/?a=1" })).toThrow(
      'APTIX_PUBLIC_URL="https://agent.example.com/?a=1": must have no query or fragment',
    );
    expect(() => readServerEnv({ APTIX_TOOL_TIMEOUT_MS: "0" })).toThrow(/APTIX_TOOL_TIMEOUT_MS/);
  });
});
