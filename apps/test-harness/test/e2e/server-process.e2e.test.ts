import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  checkAndResetHarness,
  databaseFor,
  e2eServerEnv,
  expectFinal,
  type LaunchedServer,
  launchServer,
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
const children: LaunchedServer[] = [];

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
    // A first start says it is creating the database, and how long creating, opening and migrating took.
    const messages = child.logs.map((line) => line.message);
    expect(messages).toContain("creating the embedded database (a first start takes a while)");
    for (const done of [
      "created the embedded database",
      "opened the embedded database",
      "database migrations applied",
    ]) {
      expect(child.logs.find((line) => line.message === done)).toMatchObject({
        durationMs: expect.any(Number),
      });
    }

    const status = await child.stop("SIGTERM");
    expect(status).toEqual({ code: 0, signal: null });
    expect(child.logs.map((line) => line.message)).toContain("stopped");
  });
});

describe("the server process's configuration and logs", () => {
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "aptix-e2e-config-"));
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  const configFile = async (name: string, content: unknown) => {
    const path = join(directory, name);
    await writeFile(path, JSON.stringify(content));
    return path;
  };
  const launch = (env: Record<string, string | undefined>): LaunchedServer => {
    const child = launchServer({
      env: { DATABASE_URL: "memory://", APTIX_API_KEYS: undefined, APTIX_CONFIG: undefined, ...env },
    });
    children.push(child);
    return child;
  };

  it("stops with exit code 2 on a bad LOG_LEVEL or config, one readable log line per bad key", async () => {
    const path = await configFile("bad.json", {
      conversationContexts: [{ id: "default", model: 5, provider: "openai", colour: "blue" }],
    });
    const badLevel = launch({ LOG_LEVEL: "verbose" });
    const badConfig = launch({ APTIX_CONFIG: path });
    const badBoth = launch({ LOG_LEVEL: "verbose", APTIX_CONFIG: path });
    expect(await badLevel.exited).toEqual({ code: 2, signal: null });
    expect(await badConfig.exited).toEqual({ code: 2, signal: null });
    expect(await badBoth.exited).toEqual({ code: 2, signal: null });
    // A bad environment and a bad file in one start: every problem told at once, not the file's on the next try.
    expect(badBoth.logs.map((line) => line.message)).toEqual([
      ...badLevel.logs.map((line) => line.message),
      ...badConfig.logs.map((line) => line.message),
    ]);

    expect(badLevel.logs).toEqual([
      {
        time: expect.any(String),
        level: "error",
        message:
          'Invalid environment: LOG_LEVEL="verbose": must be one of trace, debug, info, warn, error, fatal, silent',
      },
    ]);
    // One line per bad key. Sorted here: a fresh clone's run once saw them in another order than the server's.
    expect(badConfig.logs.map((line) => [line.level, line.message]).sort()).toEqual([
      [
        "error",
        `APTIX_CONFIG: ${path} is invalid: conversationContexts[0].bootPrompt: Invalid input: expected string, received undefined`,
      ],
      ["error", `APTIX_CONFIG: ${path} is invalid: conversationContexts[0].colour: is not a known key`],
      [
        "error",
        `APTIX_CONFIG: ${path} is invalid: conversationContexts[0].model: Invalid input: expected string, received number`,
      ],
    ]);
  });

  it("stops with exit code 2 and one line naming cause and fix when the port is taken or the database is down", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const portInUse = launch({ PORT: String(port) });
      // Port 1 on loopback: nothing listens there, the connection is refused.
      const databaseDown = launch({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/aptix" });
      expect(await portInUse.exited).toEqual({ code: 2, signal: null });
      expect(await databaseDown.exited).toEqual({ code: 2, signal: null });

      // Told before the database is even opened, and nothing but that line: no stack on stderr.
      expect(portInUse.logs).toEqual([
        {
          time: expect.any(String),
          level: "error",
          message: `Port ${port} on 127.0.0.1 is in use by another process: stop it, or set PORT to a free port (PORT=0 picks one).`,
        },
      ]);
      expect(portInUse.output()).toBe("");
      expect(databaseDown.logs.filter((line) => line.level === "error")).toEqual([
        {
          time: expect.any(String),
          level: "error",
          message:
            "The database at postgres://***@127.0.0.1:1/aptix refused the connection: start Postgres there, or fix DATABASE_URL (docs/configuration.md).",
        },
      ]);
      expect(databaseDown.output()).toBe("");
    } finally {
      taken.close();
    }
  });

  // `pnpm start | tee log` and Ctrl-C: the shell's SIGINT ends `tee` too, and the server's last lines meet a
  // broken pipe. Its logger once retried those writes forever at exit, deaf to every later signal.
  it("exits on SIGINT or SIGTERM with stdout piped, read or with its reader gone", async () => {
    const listening = (line: Record<string, unknown>) => line.message === "listening";
    const [read, gone, goneTerm] = [launch({}), launch({}), launch({})];
    await Promise.all([read, gone, goneTerm].map((child) => child.waitForLine(listening, startTimeoutMs)));
    gone.closeOutput();
    goneTerm.closeOutput();
    const [readStatus, goneStatus, goneTermStatus] = await Promise.all([
      read.stop("SIGINT"),
      gone.stop("SIGINT"),
      goneTerm.stop("SIGTERM"),
    ]);
    expect([readStatus, goneStatus, goneTermStatus]).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
    expect(read.logs.map((line) => line.message)).toEqual(
      expect.arrayContaining(["shutting down: letting running turns finish", "stopped"]),
    );
  });

  /** A server process holding a turn whose model answers in two minutes, and that turn's request. */
  async function holdingATurn(shutdownTimeoutMs: number) {
    harness.script(step.text("Never delivered.", { delayMs: 120_000 }));
    const child = await spawnServer({
      env: {
        DATABASE_URL: "memory://",
        APTIX_API_KEYS: undefined,
        APTIX_CONFIG: undefined,
        OPENAI_API_KEY: "test",
        OPENAI_BASE_URL: harness.baseUrl,
        APTIX_SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs),
      },
      startTimeoutMs,
    });
    children.push(child);
    const turn = serviceClient(child.url)
      .post({ sessionId: "held", turnId: "t1", instruction: "Wait" }, "anonymous")
      .catch(() => "cut");
    await vi.waitFor(() => expect(harness.responseRequests()).toHaveLength(1), { timeout: startTimeoutMs });
    return { child, turn };
  }

  it("exits at once on a second signal while a turn runs", async () => {
    const { child, turn } = await holdingATurn(600_000);
    process.kill(child.pid, "SIGINT");
    await child.waitForLine((line) => line.message === "shutting down: letting running turns finish", 10_000);
    expect(await child.stop("SIGINT")).toEqual({ code: 130, signal: null });
    expect(await turn).toBe("cut");
  });

  it("ends within APTIX_SHUTDOWN_TIMEOUT_MS of one signal while a turn is held, cutting the turn's request", async () => {
    const { child, turn } = await holdingATurn(2_000);
    // One signal only: the turn would hold the process for two minutes; the deadline ends it.
    process.kill(child.pid, "SIGTERM");
    expect(await child.exited).toMatchObject({ signal: null });
    expect(await turn).toBe("cut");
  });

  it("at LOG_LEVEL=warn writes no line at info, start-up lines included", async () => {
    const child = launch({ LOG_LEVEL: "warn", OPENAI_API_KEY: undefined });
    // The last start-up line, a warning: every info line of start-up came before it.
    await child.waitForLine(
      (line) => typeof line.message === "string" && line.message.startsWith("OPENAI_API_KEY is not set"),
      startTimeoutMs,
    );
    expect(await child.stop("SIGTERM")).toEqual({ code: 0, signal: null });
    expect(child.logs.length).toBeGreaterThan(0);
    expect(child.logs.filter((line) => line.level !== "warn" && line.level !== "error")).toEqual([]);
  });

  it("runs a partial config over the default with APTIX_MODEL, and logs a turn's request with its X-Request-Id", async () => {
    const path = await configFile("partial.json", {
      conversationContexts: [
        {
          id: "coder",
          bootPrompt: "You write code.",
          model: "gpt-4.1",
          provider: "anthropic",
          defaultMode: "general",
        },
      ],
    });
    const child = await spawnServer({
      env: {
        DATABASE_URL: "memory://",
        APTIX_API_KEYS: undefined,
        APTIX_CONFIG: path,
        APTIX_MODEL: "gpt-4.1-mini",
        APTIX_PROVIDER: "openai",
        OPENAI_API_KEY: "test",
        OPENAI_BASE_URL: harness.baseUrl,
      },
      startTimeoutMs,
    });
    children.push(child);
    expect(child.logs.find((line) => line.message === "listening")).toMatchObject({
      config: path,
      defaultContext: { id: "coder", model: "gpt-4.1-mini", provider: "openai" },
    });
    harness.script(step.text("Written."));
    const answer = await serviceClient(child.url).post(
      { sessionId: "partial-config", turnId: "t1", instruction: "Write it" },
      "anonymous",
    );
    expect(expectFinal(answer).primaryOutputText).toBe("Written.");

    const [request] = harness.responseRequests();
    const body = request?.body as { model: string; tools: Array<{ name: string }> };
    expect(body.model).toBe("gpt-4.1-mini");
    expect(JSON.stringify(body)).toContain("You write code.");
    // The modes and client tools the file left out are the built-in default's.
    expect(body.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["read_file", "list_files", "search_files", "apply_patch"]),
    );

    const requestId = answer.headers.get("x-request-id");
    const access = await child.waitForLine(
      (line) => line.message === "request" && line.path === "/v1/agent/execute",
      startTimeoutMs,
    );
    expect(access).toMatchObject({ level: "info", requestId, method: "POST", status: 200 });
    expect(await child.stop("SIGTERM")).toEqual({ code: 0, signal: null });
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
