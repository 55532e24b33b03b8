import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ScriptedOpenAI, startScriptedOpenAI } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  checkAndResetHarness,
  databaseFor,
  e2eServerEnv,
  type ServerProcess,
  serviceClient,
  spawnServer,
  type TestDatabase,
} from "../../src/e2e/index.js";
import { expectSerialized } from "./scenarios/one-turn-at-a-time.js";

// Child processes compile the server with tsx and PGlite creates its database at start-up: on CI's two cores,
// beside another package's tests, that has taken over 30 s. A test must outlast the start timeout it waits for.
const startTimeoutMs = 90_000;
vi.setConfig({ testTimeout: startTimeoutMs + 30_000, hookTimeout: startTimeoutMs + 30_000 });

let harness: ScriptedOpenAI;
const children: ServerProcess[] = [];

beforeAll(async () => {
  harness = await startScriptedOpenAI();
});

afterAll(async () => {
  await Promise.all(children.map((child) => child.kill()));
  await harness.close();
});

afterEach(() => {
  checkAndResetHarness(harness);
});

describe("the server as a child process", () => {
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "aptix-e2e-process-"));
  });

  afterAll(async () => {
    // A failed test may leave the child running and writing its database: stop it before removing that.
    await Promise.all(children.map((child) => child.kill()));
    await rm(directory, { recursive: true, force: true, maxRetries: 5 });
  });

  // The server's own entry point from its sources (CI's smoke step starts the compiled one with `pnpm start`),
  // run directly because pnpm reports a script ended by a signal as failed, whatever the server's exit code.
  it("starts on PGlite on disk without OPENAI_API_KEY, is ready, warns, and stops on SIGTERM", async () => {
    const child = await spawnServer({
      env: {
        DATABASE_URL: join(directory, "db"),
        OPENAI_API_KEY: undefined,
        OPENAI_BASE_URL: undefined,
        APTIX_API_KEYS: undefined,
        APTIX_CONFIG: undefined,
      },
      startTimeoutMs,
    });
    children.push(child);
    expect(child.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const ready = await serviceClient(child.url).get("/readyz", "anonymous");
    expect([ready.status, ready.body]).toEqual([
      200,
      { successful: true, result: { status: "ready" }, errors: [], warnings: [] },
    ]);
    expect(child.logs.find((line) => line.message === "listening")).toMatchObject({
      level: "info",
      database: `embedded PGlite at ${join(directory, "db")}`,
      config: "built-in default config",
      auth: "local mode: one principal, loopback callers only",
      providers: expect.arrayContaining(["openai"]),
    });
    const warnings = child.logs.filter((line) => line.level === "warn").map((line) => line.message);
    expect(warnings).toContainEqual(expect.stringMatching(/^OPENAI_API_KEY is not set/));

    const status = await child.stop("SIGTERM");
    expect(status).toEqual({ code: 0, signal: null });
    expect(child.logs.map((line) => line.message)).toContain("stopped");
  });
});

describe("two server processes on one Postgres", () => {
  let database: TestDatabase;
  let first: ServerProcess;
  let second: ServerProcess;

  beforeAll(async () => {
    database = await databaseFor("postgres");
    const env = {
      ...(await e2eServerEnv(database)),
      OPENAI_API_KEY: "test",
      OPENAI_BASE_URL: harness.baseUrl,
    };
    // Started together: both apply the migrations at start-up, as two instances of one deployment would.
    [first, second] = await Promise.all([
      spawnServer({ env, startTimeoutMs }),
      spawnServer({ env, startTimeoutMs }),
    ]);
    children.push(first, second);
  });

  afterAll(async () => {
    await Promise.all([first?.stop("SIGTERM"), second?.stop("SIGTERM")]);
    await database?.dispose();
  });

  it("serializes one session's turns across the two processes: the second is busy while the first runs", async () => {
    await expectSerialized(harness, serviceClient(first.url), serviceClient(second.url));
  });
});
