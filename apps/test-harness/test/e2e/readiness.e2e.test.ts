/**
 * Readiness and what callers learn of a part that is down, over real HTTP with real MCP server processes
 * (docs/security.md): `/readyz` reads a status kept in the background, so it answers alike under load; a down part is
 * named, never its address, in `/readyz` and in a failed tool call; the detail is in the logs.
 */
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  checkAndResetHarness,
  E2E_CATALOG,
  expectFailure,
  expectOk,
  type HttpMcpFixture,
  startHttpMcpFixture,
  startTestService,
  stdioMcpFixture,
  type TestService,
  uniqueId,
  userTurn,
  writeCatalog,
} from "../../src/e2e/index.js";

let harness: ScriptedOpenAI;
let docs: HttpMcpFixture;
let service: TestService;

beforeAll(async () => {
  harness = await startScriptedOpenAI();
  docs = await startHttpMcpFixture();
  const config = await writeCatalog({
    ...E2E_CATALOG,
    modes: [
      { ...E2E_CATALOG.modes[0], tools: ["read_file", "repo__echo", "docs__echo"] },
      ...E2E_CATALOG.modes.slice(1),
    ],
    mcpServers: [stdioMcpFixture("repo"), docs.config("docs")],
  });
  service = await startTestService({ store: "pglite", harness, env: { APTIX_CONFIG: config } });
});

afterAll(async () => {
  await service?.close();
  await docs?.stop();
  await harness?.close();
});

afterEach(() => {
  checkAndResetHarness(harness);
});

/** Everything a caller could see of `docs`' address. */
const ADDRESS = () =>
  new RegExp(`127\\.0\\.0\\.1|localhost|:${new URL(docs.url).port}\\b|ECONNREFUSED|fetch failed`);

describe("readiness with MCP servers", () => {
  it("answers 300 concurrent /readyz calls all 200 ready while everything is up, pinging no MCP server for them", async () => {
    const pingsBefore = await docs.pings();
    const answers = await Promise.all(
      Array.from({ length: 300 }, () =>
        fetch(`${service.url}/readyz`).then(async (response) => [response.status, await response.text()]),
      ),
    );
    const notReady = answers.filter(([status]) => status !== 200);
    expect(notReady).toEqual([]);
    expect(new Set(answers.map(([, body]) => body))).toEqual(
      new Set([JSON.stringify({ successful: true, result: { status: "ready" }, errors: [], warnings: [] })]),
    );
    // Only the background check pings (once per period, and a few periods at most went by): not each call.
    expect((await docs.pings()) - pingsBefore).toBeLessThan(10);
  });

  it("names a down MCP server without its address in /readyz and in a failed tool call; the detail is logged", async () => {
    await docs.stop();
    // The background check finds it down within its period.
    const answer = await vi.waitFor(
      async () => {
        const readyz = await service.get("/readyz", "anonymous");
        expect(readyz.status).toBe(503);
        return readyz;
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(expectFailure(answer, 503, "NOT_READY").message).toBe(
      'Not ready: MCP server "docs" is unavailable',
    );
    expect(JSON.stringify(answer.body)).not.toMatch(ADDRESS());

    const sessionId = uniqueId("down");
    harness.script(
      step.functionCalls({ name: "docs__echo", arguments: { text: "hi" }, callId: "call_docs" }),
    );
    const failed = await service.post(userTurn(sessionId, "t1", "Ask the docs"));
    expect(expectFailure(failed, 502, "TOOL_FAILED")).toMatchObject({
      message: 'Server tool docs__echo failed: MCP server "docs" is unavailable',
      details: { tool: "docs__echo", toolCallId: "call_docs" },
    });
    const session = expectOk(await service.session(sessionId));
    expect(session.turns[0]?.error?.message).toBe(
      'Server tool docs__echo failed: MCP server "docs" is unavailable',
    );
    const trace = await service.trace(sessionId, "t1");
    expect(JSON.stringify([failed.body, session, trace.body])).not.toMatch(ADDRESS());

    // The operator's log has what happened, address and all.
    expect(
      service.logs.some(
        (line) =>
          JSON.stringify(line).includes('"mcpServer":"docs"') && /ECONNREFUSED/.test(JSON.stringify(line)),
      ),
    ).toBe(true);
    // The stdio server is still up: only docs is named.
    expect(service.logs).toContainEqual(
      expect.objectContaining({ message: "not ready", down: ['MCP server "docs"'] }),
    );
  });
});
