/**
 * Server tools over real HTTP (docs/server-tools.md): MCP servers as real processes (the fixture over stdio and over
 * streamable HTTP), the built-in `create_file`, a client tool, the files they produce, and what must never
 * leak (the MCP servers' env and headers).
 */
import { createHash } from "node:crypto";
import { defaultClientTools } from "@aptix/contracts";
import { readServerEnv, silentLogger, startServer } from "@aptix/server";
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  API_KEYS,
  checkAndResetHarness,
  E2E_CATALOG,
  expectContinuation,
  expectFailure,
  expectFinal,
  expectOk,
  type HttpMcpFixture,
  startHttpMcpFixture,
  startTestService,
  stdioMcpFixture,
  type TestService,
  toolContinuation,
  uniqueId,
  userTurn,
  writeCatalog,
} from "../../src/e2e/index.js";

/** Secrets the MCP servers need (one in a stdio server's env, one in an HTTP server's headers). */
const STDIO_TOKEN = "stdio-secret-6f1d0c9a7b";
const HTTP_TOKEN = "http-secret-3e8b2a5d4c";
const TOOL_TIMEOUT_MS = 1_500;

function toolsCatalog(mcpServers: unknown[], files?: Record<string, number>) {
  return {
    ...E2E_CATALOG,
    modes: [
      {
        ...E2E_CATALOG.modes[0],
        tools: [
          "read_file",
          "create_file",
          "knowledge_search",
          "repo__echo",
          "repo__fail",
          "repo__hang",
          "docs__report",
        ],
      },
      ...E2E_CATALOG.modes.slice(1),
    ],
    serverTools: [
      { name: "create_file", builtin: "create_file" },
      { name: "knowledge_search", builtin: "knowledge_search" },
    ],
    mcpServers,
    ...(files ? { files } : {}),
  };
}

type Body = {
  input: Array<{ type?: string; call_id?: string; output?: string }>;
  tools: Array<Record<string, unknown>>;
};

let harness: ScriptedOpenAI;
let docs: HttpMcpFixture;
let service: TestService;
const sent = () => harness.responseRequests().map((request) => request.body as Body);
const outputsOf = (body: Body | undefined) =>
  (body?.input ?? []).filter((item) => item.type === "function_call_output");

beforeAll(async () => {
  harness = await startScriptedOpenAI();
  docs = await startHttpMcpFixture({ token: HTTP_TOKEN });
  const config = await writeCatalog(
    toolsCatalog([stdioMcpFixture("repo", STDIO_TOKEN), docs.config("docs")]),
  );
  service = await startTestService({
    store: "pglite",
    harness,
    env: { APTIX_CONFIG: config, APTIX_TOOL_TIMEOUT_MS: String(TOOL_TIMEOUT_MS) },
  });
});

afterAll(async () => {
  await service?.close();
  await docs?.stop();
  await harness?.close();
});

afterEach(() => {
  checkAndResetHarness(harness);
});

describe("server tools, MCP servers and files over HTTP", () => {
  it("runs MCP tools and create_file, hands the client tool back, and lists toolResults and files on the final answer", async () => {
    const sessionId = uniqueId("tools");
    harness.script(
      step.functionCalls([
        { name: "repo__echo", arguments: { text: "hi" }, callId: "call_echo" },
        { name: "docs__report", arguments: {}, callId: "call_report" },
        {
          name: "create_file",
          arguments: {
            name: "notes.md",
            mimeType: "text/markdown",
            content: "# Notes\n",
            encoding: null,
            description: null,
          },
          callId: "call_file",
        },
        { name: "read_file", arguments: { path: "a.ts" }, callId: "call_read" },
      ]),
      step.text("All done."),
    );
    const continuation = expectContinuation(await service.post(userTurn(sessionId, "t1", "Do it all")));
    expect(continuation.toolCalls).toEqual([
      { toolCallId: "call_read", name: "read_file", argumentsJson: '{"path":"a.ts"}' },
    ]);
    const final = expectFinal(
      await service.post(
        toolContinuation(sessionId, "t1", [{ toolCallId: "call_read", resultJson: '"export {}"' }]),
      ),
    );
    expect(final.primaryOutputText).toBe("All done.");

    // The MCP tools were offered with their schemas in strict form.
    const [first, second] = sent();
    expect(first?.tools).toContainEqual(
      expect.objectContaining({
        name: "repo__echo",
        description: "Echo the text back.",
        strict: true,
        parameters: {
          type: "object",
          properties: { text: { type: "string" } },
          required: ["text"],
          additionalProperties: false,
        },
      }),
    );
    expect(first?.tools).toContainEqual(expect.objectContaining({ name: "create_file", strict: true }));

    // Server results come back as outputs together with the client's, in call order.
    const outputs = outputsOf(second);
    expect(outputs.map((output) => output.call_id)).toEqual([
      "call_echo",
      "call_report",
      "call_file",
      "call_read",
    ]);
    expect(outputs[0]?.output).toBe('"echo: hi"');
    const report = JSON.parse(outputs[1]?.output ?? "") as {
      text: string;
      files: Array<Record<string, string>>;
    };
    expect(report).toEqual({
      text: "The report is attached.",
      files: [
        {
          fileId: expect.stringMatching(/^file_/),
          name: "summary.txt",
          mimeType: "text/plain",
          url: expect.any(String),
        },
      ],
    });

    expect(final.toolResults?.map((result) => [result.toolCallId, result.name])).toEqual([
      ["call_echo", "repo__echo"],
      ["call_report", "docs__report"],
      ["call_file", "create_file"],
    ]);
    expect(final.toolResults?.every((result) => result.resultJson !== undefined)).toBe(true);
    expect(final.files?.map((file) => [file.name, file.mimeType])).toEqual([
      ["summary.txt", "text/plain"],
      ["notes.md", "text/markdown"],
    ]);
    expect(JSON.parse(final.toolResults?.[2]?.resultJson ?? "")).toEqual(final.files?.[1]);

    for (const [file, text] of [
      [final.files?.[0], "Summary: all checks passed.\n"],
      [final.files?.[1], "# Notes\n"],
    ] as const) {
      if (!file) throw new Error("file missing");
      expect(file.url.startsWith(`${service.url}/v1/files/file_`)).toBe(true);
      expect(Date.parse(file.contentExpires ?? "")).toBeGreaterThan(Date.now());
      const response = await fetch(file.url, { headers: { authorization: `Bearer ${API_KEYS.alice}` } });
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(response.status).toBe(200);
      expect(new TextDecoder().decode(bytes)).toBe(text);
      expect(`sha256:${createHash("sha256").update(bytes).digest("hex")}`).toBe(file.contentHash);
      expect(response.headers.get("content-type")).toBe(file.mimeType);
      expect(response.headers.get("etag")).toBe(`"${file.contentHash}"`);
      const again = await fetch(file.url, {
        headers: { authorization: `Bearer ${API_KEYS.alice}`, "if-none-match": `"${file.contentHash}"` },
      });
      expect(again.status).toBe(304);
      // Owner only: another principal gets what an unknown id gets.
      expectFailure(await service.get(new URL(file.url).pathname, "bob"), 404, "FILE_NOT_FOUND");
    }
  });

  it("gives an MCP isError result to the model as an error output and lists it as errorMessage", async () => {
    const sessionId = uniqueId("tools");
    harness.script(step.functionCalls({ name: "repo__fail", callId: "call_fail" }), step.text("It failed."));
    const final = expectFinal(await service.post(userTurn(sessionId, "t1", "Try it")));
    // The OpenAI adapter marks error outputs as `{"error": …}` on the wire.
    expect(outputsOf(sent()[1])).toEqual([
      expect.objectContaining({
        call_id: "call_fail",
        output: JSON.stringify({ error: "the fixture failed on purpose" }),
      }),
    ]);
    expect(final.toolResults).toEqual([
      {
        toolCallId: "call_fail",
        name: "repo__fail",
        errorMessage: "the fixture failed on purpose",
        executionMs: expect.any(Number),
      },
    ]);
  });

  it("fails the turn with TOOL_FAILED when an MCP tool hangs past APTIX_TOOL_TIMEOUT_MS, and the next turn works", async () => {
    const sessionId = uniqueId("tools");
    harness.script(
      step.functionCalls({ name: "repo__hang", callId: "call_hang" }),
      step.functionCalls({ name: "repo__echo", arguments: { text: "again" }, callId: "call_echo" }),
      step.text("Back."),
    );
    const error = expectFailure(await service.post(userTurn(sessionId, "t1", "Hang")), 502, "TOOL_FAILED");
    expect(error).toMatchObject({
      message: `Server tool repo__hang failed: it ran longer than ${TOOL_TIMEOUT_MS} ms`,
      details: { tool: "repo__hang", toolCallId: "call_hang", timeoutMs: TOOL_TIMEOUT_MS },
    });
    const session = expectOk(await service.session(sessionId));
    expect(session.turns[0]).toMatchObject({
      turnId: "t1",
      status: "failed",
      error: { code: "TOOL_FAILED" },
    });

    // The same stdio server still answers: the cancelled call did not break its connection.
    const next = expectFinal(await service.post(userTurn(sessionId, "t2", "Again")));
    expect(next.primaryOutputText).toBe("Back.");
    expect(next.toolResults?.[0]?.resultJson).toBe('"echo: again"');
  });

  it("searches the turn's workspace with knowledge_search and answers chunks in the [CONTEXT] chunk format", async () => {
    const workspaceId = uniqueId("ws");
    const pushed = await fetch(`${service.url}/v1/workspaces/${workspaceId}/documents`, {
      method: "PUT",
      headers: { authorization: `Bearer ${API_KEYS.alice}`, "content-type": "application/json" },
      body: JSON.stringify({
        documents: [{ path: "src/greet.ts", contents: "export function greetUser() {}\n" }],
      }),
    });
    expect(pushed.status).toBe(200);
    harness.script(
      step.functionCalls({
        name: "knowledge_search",
        arguments: { query: "greetUser" },
        callId: "call_search",
      }),
      step.text("Found."),
    );
    const final = expectFinal(
      await service.post(userTurn(uniqueId("tools"), "t1", "Where is greetUser?", { workspaceId })),
    );
    expect(final.toolResults?.[0]).toMatchObject({
      name: "knowledge_search",
      resultJson: expect.any(String),
    });
    const output = JSON.parse(final.toolResults?.[0]?.resultJson ?? "") as string;
    expect(output).toBe(
      [
        "[CONTEXT]",
        "",
        "=== CHUNK 1 ===",
        "Id: ctx_1",
        "Path: src/greet.ts",
        "Lines: 1-1",
        "Language: typescript",
      ]
        .concat(["```typescript", "export function greetUser() {}", "```"])
        .join("\n"),
    );
  });

  it("never writes an MCP server's env or headers into a log or a trace", async () => {
    const sessionId = uniqueId("tools");
    harness.script(
      step.functionCalls([
        { name: "repo__echo", arguments: { text: "x" }, callId: "call_echo" },
        { name: "docs__report", arguments: {}, callId: "call_report" },
      ]),
      step.text("Done."),
    );
    expectFinal(await service.post(userTurn(sessionId, "t1", "Go")));
    const trace = await service.trace(sessionId, "t1");
    expect(trace.status).toBe(200);
    const seen = JSON.stringify([trace.body, service.logs]);
    expect(seen).toContain("repo__echo");
    expect(seen).not.toContain(STDIO_TOKEN);
    expect(seen).not.toContain(HTTP_TOKEN);
  });
});

describe("only the tools a mode offers, with arguments that fit (docs/security.md)", () => {
  // `general` offers only the terminal agent's read_file; create_file, the MCP server's tools and apply_patch are
  // configured, and offered by `wide` only.
  const narrowCatalog = {
    ...toolsCatalog([stdioMcpFixture("repo")]),
    modes: [
      { ...E2E_CATALOG.modes[0], tools: ["read_file"] },
      {
        ...E2E_CATALOG.modes[0],
        id: "wide",
        tools: ["read_file", "apply_patch", "create_file", "repo__echo"],
      },
    ],
    clientTools: defaultClientTools,
  };
  let narrow: TestService;

  beforeAll(async () => {
    narrow = await startTestService({
      store: "pglite",
      harness,
      env: { APTIX_CONFIG: await writeCatalog(narrowCatalog) },
    });
  });

  afterAll(async () => {
    await narrow?.close();
  });

  it("runs no tool and hands the client no call the mode did not offer, nor arguments its schema refuses", async () => {
    const sessionId = uniqueId("offered");
    const read = { path: "a.ts", startLine: null, endLine: null };
    harness.script(
      step.functionCalls([
        {
          name: "create_file",
          arguments: {
            name: "x.txt",
            mimeType: "text/plain",
            content: "x",
            encoding: null,
            description: null,
          },
          callId: "call_file",
        },
        { name: "repo__echo", arguments: { text: "hi" }, callId: "call_echo" },
        {
          name: "apply_patch",
          arguments: { patch: "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+x\n" },
          callId: "call_patch",
        },
        { name: "read_file", arguments: { path: 5, evil: true }, callId: "call_bad" },
        { name: "read_file", arguments: read, callId: "call_read" },
      ]),
      step.text("Read it."),
    );
    // Only the offered call with good arguments reaches the client.
    const continuation = expectContinuation(await narrow.post(userTurn(sessionId, "t1", "Go")));
    expect(continuation.toolCalls).toEqual([
      { toolCallId: "call_read", name: "read_file", argumentsJson: JSON.stringify(read) },
    ]);
    const final = expectFinal(
      await narrow.post(toolContinuation(sessionId, "t1", [{ toolCallId: "call_read", resultJson: '"A"' }])),
    );
    expect(final.primaryOutputText).toBe("Read it.");
    // Nothing ran on the server: no file, no server tool result.
    expect(final.files).toBeUndefined();
    expect(final.toolResults).toBeUndefined();

    // The model got an error output for each, in call order, with the client's result.
    const outputs = outputsOf(sent()[1]);
    const refused = (name: string) =>
      JSON.stringify({ error: `Tool "${name}" is not available in mode "general".` });
    expect(outputs.map((output) => [output.call_id, output.output])).toEqual([
      ["call_file", refused("create_file")],
      ["call_echo", refused("repo__echo")],
      ["call_patch", refused("apply_patch")],
      [
        "call_bad",
        expect.stringMatching(/^\{"error":"Invalid arguments for read_file: path must be a string; /),
      ],
      ["call_read", '"A"'],
    ]);

    // The trace has the refused calls and what the model was told.
    const trace = expectOk(await narrow.trace(sessionId, "t1"));
    expect(trace.toolExecutions).toEqual([]);
    expect(trace.llmCalls[0]?.response?.toolCalls.map((call) => call.name)).toEqual([
      "create_file",
      "repo__echo",
      "apply_patch",
      "read_file",
      "read_file",
    ]);
    const traced = trace.llmCalls[1]?.request?.input.filter((item) => item.type === "function_call_output");
    expect(traced?.map((item) => item.callId)).toEqual([
      "call_file",
      "call_echo",
      "call_patch",
      "call_bad",
      "call_read",
    ]);
    expect(traced?.[0]?.output).toBe('Tool "create_file" is not available in mode "general".');
  });
});

describe("file expiry and MCP readiness", () => {
  let short: TestService;
  let flaky: HttpMcpFixture;

  beforeAll(async () => {
    flaky = await startHttpMcpFixture();
    const config = await writeCatalog(
      // Long enough that a turn on a busy machine still answers before its file expires.
      toolsCatalog([stdioMcpFixture("repo"), flaky.config("docs")], { ttlSeconds: 8 }),
    );
    // A short lease makes the housekeeping (and with it the file sweep) run every 750 ms; one of 1 s was lost by
    // a turn that a loaded machine held longer than that between two of its writes.
    short = await startTestService({
      store: "pglite",
      harness,
      env: { APTIX_CONFIG: config, APTIX_LEASE_MS: "3000" },
    });
  });

  afterAll(async () => {
    await short?.close();
    await flaky?.stop();
  });

  it("answers 410 FILE_EXPIRED once a file has expired, and 404 once the sweep deleted it", async () => {
    harness.script(
      step.functionCalls({
        name: "create_file",
        arguments: { name: "a.txt", mimeType: "text/plain", content: "a", encoding: null, description: null },
      }),
      step.text("Made it."),
    );
    const final = expectFinal(await short.post(userTurn(uniqueId("files"), "t1", "Make a file")));
    const file = final.files?.[0];
    const path = new URL(file?.url ?? "").pathname;
    const expires = Date.parse(file?.contentExpires ?? "");
    expect(expires).toBeGreaterThan(Date.now() - 60_000);
    // The content is not JSON while it is served: read the status first, the envelope only when it is an error.
    const read = async () => {
      const answer = await fetch(`${short.url}${path}`, {
        headers: { authorization: `Bearer ${API_KEYS.alice}` },
      });
      const text = await answer.text();
      return { status: answer.status, headers: answer.headers, body: answer.ok ? text : JSON.parse(text) };
    };
    // A read that comes back before the expiry the answer names was judged before it, so it is served. (On a
    // machine so busy that the answer itself came after it, the first read is already 410 or 404.)
    const first = await read();
    if (Date.now() < expires) expect(first).toMatchObject({ status: 200, body: "a" });
    else expect([410, 404]).toContain(first.status);
    // The sweep runs every 750 ms: expiry (410) and deletion (404) are each seen by polling.
    await vi.waitFor(
      async () => {
        const answer = await read();
        if (answer.status === 410) expectFailure(answer, 410, "FILE_EXPIRED");
        expect(answer.status).toBe(404);
      },
      { timeout: 30_000, interval: 50 },
    );
    expectFailure(await short.get(path), 404, "FILE_NOT_FOUND");
  });

  it("is ready while its MCP servers answer, and not ready, naming the server, once one is down", async () => {
    expectOk(await short.get("/readyz", "anonymous"));
    await flaky.stop();
    // The background check finds it down within its period.
    await vi.waitFor(
      async () => {
        const answer = await short.get("/readyz", "anonymous");
        expect(expectFailure(answer, 503, "NOT_READY").message).toBe(
          'Not ready: MCP server "docs" is unavailable',
        );
      },
      { timeout: 20_000, interval: 100 },
    );
  });
});

describe("start-up with MCP servers", () => {
  const start = async (catalog: unknown) => {
    const env = readServerEnv({
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: "memory://",
      APTIX_CONFIG: await writeCatalog(catalog),
    });
    return startServer(env, silentLogger);
  };

  it("stops when an MCP server cannot be reached, naming it", async () => {
    await expect(
      start(
        toolsCatalog([
          stdioMcpFixture("repo"),
          { name: "docs", transport: "http", url: "http://127.0.0.1:9/mcp" },
        ]),
      ),
    ).rejects.toThrow(/mcpServers\[1\] \("docs"\): MCP server "docs" is unavailable/);
  });

  it("stops when a stdio MCP server exits at start, naming it", async () => {
    // --require-token without a token: the fixture exits at once.
    const broken = { ...stdioMcpFixture("repo", "unused"), env: {} };
    await expect(start(toolsCatalog([broken]))).rejects.toThrow(
      /mcpServers\[0\] \("repo"\): MCP server "repo" is unavailable/,
    );
  });

  it("stops when a name is both a client tool and a server tool", async () => {
    const catalog = toolsCatalog([stdioMcpFixture("repo")]);
    const clash = {
      ...catalog,
      modes: catalog.modes.map((mode) => ({
        ...mode,
        tools: mode.tools.filter((name) => name !== "docs__report"),
      })),
      clientTools: [
        ...catalog.clientTools,
        { name: "repo__echo", description: "A client echo.", parameters: { type: "object" } },
      ],
    };
    await expect(start(clash)).rejects.toThrow(
      /clientTools\[2\]\.name: is the name of a server tool \(repo__echo\)/,
    );
  });
});
