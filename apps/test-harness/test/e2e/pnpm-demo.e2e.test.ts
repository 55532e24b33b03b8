/**
 * `pnpm demo` as the README's quick start runs it: the `pnpm` process at the workspace root, no provider key in its
 * environment. The README's curl flow (a user turn, the client tool's result, the final answer), a streamed turn,
 * a file written after the user approved it and a compaction, each marked as the demo's; then a Ctrl-C (SIGINT to
 * the terminal's process group: pnpm and what it runs) stops everything it started, pnpm reporting no failure.
 * (pnpm-start.e2e.test.ts stops `pnpm start` with SIGTERM to pnpm alone, as a process manager does.)
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  deltasOf,
  expectContinuation,
  expectFinal,
  expectOk,
  resultOf,
  type ServerProcess,
  serviceClient,
  shownTextOf,
  spawnServer,
  streamExecute,
  toolContinuation,
  uniqueId,
  userTurn,
} from "../../src/e2e/index.js";
import { alive, listening } from "../support/process-checks.js";

// `pnpm demo` builds first: turbo's cache answers when CI built already, a fresh clone compiles every package the
// server needs (minutes on a busy machine), then PGlite creates its database.
const startTimeoutMs = 600_000;
vi.setConfig({ testTimeout: 60_000, hookTimeout: startTimeoutMs + 30_000 });

const DEMO = { code: "DEMO_MODEL", message: expect.stringContaining("demo model") };

let demo: ServerProcess;

beforeAll(async () => {
  demo = await spawnServer({
    script: "demo",
    env: {
      DATABASE_URL: "memory://",
      OPENAI_API_KEY: undefined,
      ANTHROPIC_API_KEY: undefined,
      OPENAI_BASE_URL: undefined,
      APTIX_API_KEYS: undefined,
      APTIX_CONFIG: undefined,
      APTIX_MODEL: undefined,
      APTIX_PROVIDER: undefined,
    },
    startTimeoutMs,
  });
});

afterAll(async () => {
  await demo?.kill();
});

describe("pnpm demo, without a provider key", () => {
  it("says it is a demo in its start-up line and on /readyz, and warns of no missing key", async () => {
    const listening = demo.logs.find((line) => line.message === "listening");
    expect(listening).toMatchObject({ demo: DEMO.message, config: "built-in demo config" });
    expect(demo.logs.filter((line) => line.level === "warn")).toEqual([]);
    const ready = await serviceClient(demo.url).get("/readyz", "anonymous");
    expect([ready.status, ready.body]).toEqual([
      200,
      { successful: true, result: { status: "ready" }, errors: [], warnings: [DEMO] },
    ]);
  });

  it("answers the README's curl flow: a read_file continuation, then a final answer about the file", async () => {
    const client = serviceClient(demo.url);
    const sessionId = uniqueId("demo");
    const first = await client.post(
      userTurn(sessionId, "turn-1", "What does src/app.ts export?"),
      "anonymous",
    );
    expect(first.body.warnings).toEqual([DEMO]);
    const continuation = expectContinuation(first);
    expect(continuation.toolCalls).toEqual([
      {
        toolCallId: expect.stringMatching(/^call_/),
        name: "read_file",
        argumentsJson: JSON.stringify({ path: "src/app.ts", startLine: null, endLine: null }),
      },
    ]);
    const [call] = continuation.toolCalls;
    const second = await client.post(
      toolContinuation(sessionId, "turn-1", [
        { toolCallId: call?.toolCallId ?? "", resultJson: JSON.stringify("export const app = 1;") },
      ]),
      "anonymous",
    );
    expect(second.body.warnings).toEqual([DEMO]);
    const final = expectFinal(second);
    expect(final.primaryOutputText).toBe("`src/app.ts` exports `app` (1 line).");
    expect(final.usage).toMatchObject({ llmCalls: 2 });
  });

  it("streams an answer a word at a time, its result marked as the demo's", async () => {
    const sessionId = uniqueId("demo-stream");
    const stream = await streamExecute(demo.url, {
      ...userTurn(sessionId, "turn-2", "Hello there, Aptix"),
      stream: true,
    });
    const events = await stream.readToEnd();
    const result = resultOf(events);
    expect(result.warnings).toEqual([DEMO]);
    expect(result.successful && result.result.kind === "final" && result.result.primaryOutputText).toBe(
      shownTextOf(events),
    );
    expect(shownTextOf(events)).toMatch(/^You said: "Hello there, Aptix"\./);
    expect(deltasOf(events).length).toBeGreaterThan(10);
  });

  it("writes a file through create_file only once the user approved it, and compacts the session on request", async () => {
    const client = serviceClient(demo.url);
    const sessionId = uniqueId("demo-write");
    const paused = expectContinuation(
      await client.post(userTurn(sessionId, "t1", "Write notes.md with what we did"), "anonymous"),
    );
    const [approval] = paused.toolCalls;
    expect(approval?.name).toBe("aptix_approve");
    expect(JSON.parse(approval?.argumentsJson ?? "{}")).toMatchObject({ tool: "create_file", server: null });
    const final = expectFinal(
      await client.post(
        toolContinuation(sessionId, "t1", [
          { toolCallId: approval?.toolCallId ?? "", resultJson: JSON.stringify({ approved: true }) },
        ]),
        "anonymous",
      ),
    );
    expect(final.files?.map((file) => file.name)).toEqual(["notes.md"]);
    expect(final.primaryOutputText).toContain("I wrote `notes.md`");

    const compacted = await client.send("POST", `/v1/sessions/${sessionId}/compact`, undefined, "anonymous");
    expect(compacted.body.warnings).toEqual([DEMO]);
    expect(JSON.stringify(expectOk(compacted))).toContain("compact");
  });

  it("stops with everything it started on a Ctrl-C, and pnpm reports no failure", async () => {
    const started = demo.descendants();
    // pnpm's own child (the launcher) and the server under it, at least.
    expect(started.length).toBeGreaterThanOrEqual(2);
    const port = Number(new URL(demo.url).port);
    // A terminal signals its foreground process group: pnpm leads it (spawned detached).
    process.kill(-demo.pid, "SIGINT");
    expect(await demo.exited).toEqual({ code: 0, signal: null });
    expect(demo.output()).not.toContain("ELIFECYCLE");
    // One stop, not two: a second signal would have the server exit without waiting for running turns.
    expect(demo.logs.filter((line) => line.level === "warn")).toEqual([]);
    expect(demo.logs.at(-1)).toMatchObject({ message: "stopped" });
    expect(started.filter(alive)).toEqual([]);
    expect(await listening(port)).toBe(false);
  });
});
