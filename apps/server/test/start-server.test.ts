import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LlmCallOptions, LlmProvider, LlmRequest } from "@aptix/core";
import { ScriptedLlmProvider } from "@aptix/core/testing";
import { describe, expect, it, vi } from "vitest";
import { ConfigError } from "../src/config/config-error.js";
import { DEFAULT_CATALOG } from "../src/config/default-catalog.js";
import { readServerEnv } from "../src/config/server-env.js";
import { silentLogger } from "../src/logging/silent-logger.js";
import { startServer } from "../src/start-server.js";
import { housekeepingIntervalMs } from "../src/wiring/housekeeping-interval-ms.js";
import { capturedLog } from "./captured-log.js";

/** The default catalog's `openai` provider, answering from a script after a pause. */
function slowProvider(delayMs: number): { provider: LlmProvider; scripted: ScriptedLlmProvider } {
  const scripted = new ScriptedLlmProvider({ id: "openai" });
  return {
    scripted,
    provider: {
      id: "openai",
      storesResponses: true,
      async call(request: LlmRequest, options?: LlmCallOptions) {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return scripted.call(request, options);
      },
    },
  };
}

// Opening the embedded PGlite takes seconds on a loaded machine.
describe("startServer", { timeout: 60_000 }, () => {
  it("lets a running turn finish before it stops, then refuses connections", async () => {
    const { provider, scripted } = slowProvider(400);
    scripted.enqueue({ text: "Finished while shutting down." });
    const { logger, lines } = capturedLog();
    const server = await startServer(readServerEnv({ PORT: "0", DATABASE_URL: "memory://" }), logger, [
      provider,
    ]);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    const turn = fetch(`${server.url}/v1/agent/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sessionId: "s", turnId: "t", instruction: "Work" }),
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = server.close();
    const answer = await turn;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({
      successful: true,
      result: { primaryOutputText: "Finished while shutting down." },
    });
    await closed;
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();

    const logged = lines as Array<{ message: string; requestId?: string; status?: number }>;
    const messages = logged.map((entry) => entry.message);
    expect(messages).toContain("listening");
    // Start-up says what it is doing while the embedded database is made, and how long each step took.
    const steps = [
      "creating the embedded database (a first start takes a while)",
      "created the embedded database",
      "opening the embedded database",
      "opened the embedded database",
      "applying database migrations",
      "database migrations applied",
    ];
    expect(messages.filter((message) => steps.includes(message))).toEqual(steps);
    for (const done of [steps[1], steps[3], steps[5]]) {
      expect(logged.find((entry) => entry.message === done)).toMatchObject({
        level: "info",
        database: "embedded PGlite in memory",
        durationMs: expect.any(Number),
      });
    }
    expect(
      logged.find((entry) => entry.message === "request" && entry.status === 200 && entry.requestId),
    ).toBeDefined();
    expect(logged.at(-1)?.message).toBe("stopped");
  });

  it("refuses a conversation context whose provider it has no adapter for", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "aptix-config-")), "config.json");
    writeFileSync(
      path,
      JSON.stringify({
        ...DEFAULT_CATALOG,
        conversationContexts: [{ ...DEFAULT_CATALOG.conversationContexts[0], provider: "opnai" }],
      }),
    );
    const started = startServer(
      readServerEnv({ PORT: "0", DATABASE_URL: "memory://", APTIX_CONFIG: path }),
      silentLogger,
    );
    await expect(started).rejects.toBeInstanceOf(ConfigError);
    await expect(started).rejects.toThrow(
      'conversationContexts[0].provider: "opnai" is not a provider this server has (openai, anthropic)',
    );
  });

  it("warns at start-up of each key shorter than 32 characters, naming its principal and never the key", async () => {
    const short = "alice-key-0123456789";
    const long = "b".repeat(32);
    const { logger, lines } = capturedLog();
    const server = await startServer(
      readServerEnv({ PORT: "0", DATABASE_URL: "memory://", APTIX_API_KEYS: `alice:${short},bob:${long}` }),
      logger,
      [new ScriptedLlmProvider({ id: "openai" })],
    );
    await server.close();
    const warnings = lines.filter((line) => line.level === "warn").map((line) => line.message);
    expect(warnings).toEqual([
      'APTIX_API_KEYS: the key of principal "alice" is shorter than 32 characters; make a key that cannot be guessed with `openssl rand -hex 32`.',
    ]);
    expect(JSON.stringify(lines)).not.toContain(short);
  });

  it("stops start-up with a ConfigError when the config file is bad", async () => {
    await expect(
      startServer(
        readServerEnv({ PORT: "0", DATABASE_URL: "memory://", APTIX_CONFIG: "/nonexistent.json" }),
        silentLogger,
      ),
    ).rejects.toThrow(/APTIX_CONFIG: cannot read/);
  });
});

describe("the server's housekeeping", { timeout: 60_000 }, () => {
  it("runs every quarter lease, at most every minute", () => {
    expect(housekeepingIntervalMs(1_000)).toBe(250);
    expect(housekeepingIntervalMs(10_000)).toBe(2_500);
    expect(housekeepingIntervalMs(10 * 60_000)).toBe(60_000);
    expect(housekeepingIntervalMs(24 * 3_600_000)).toBe(60_000);
  });

  it("fails a turn whose lease expired within half a lease, and prunes ended turns' stream events", async () => {
    const scripted = new ScriptedLlmProvider({ id: "openai" });
    scripted.enqueue({ text: "Too late." }, { text: "streamed words" });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const stuck = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let calls = 0;
    // Its first call hangs past the lease, as an instance that stopped answering would.
    const provider: LlmProvider = {
      id: "openai",
      storesResponses: true,
      async call(request: LlmRequest, options?: LlmCallOptions) {
        if (calls++ === 0) {
          entered();
          await released;
        }
        return scripted.call(request, options);
      },
    };
    const env = readServerEnv({
      PORT: "0",
      DATABASE_URL: "memory://",
      APTIX_LEASE_MS: "1000",
      APTIX_EVENT_RETENTION_MS: "0",
    });
    const server = await startServer(env, silentLogger, [provider]);
    const post = (body: unknown) =>
      fetch(`${server.url}/v1/agent/execute`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    try {
      const hanging = post({ sessionId: "stuck", turnId: "t1", instruction: "Work" });
      await stuck;
      const claimedBy = Date.now();
      // Lease 1 s, then at most two housekeeping intervals (250 ms each) past its expiry, plus slack.
      await vi.waitFor(
        async () => {
          const session = (await (await fetch(`${server.url}/v1/sessions/stuck`)).json()) as {
            result: { turns: Array<{ status: string; error: { code: string } | null }> };
          };
          expect(session.result.turns).toMatchObject([
            { status: "failed", error: { code: "TURN_INTERRUPTED" } },
          ]);
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(Date.now() - claimedBy).toBeLessThan(1_000 + 2 * 250 + 1_000);
      release();
      const late = await hanging;
      expect(late.status).toBe(503);
      expect(await late.json()).toMatchObject({ errors: [{ code: "TURN_INTERRUPTED" }] });

      const streamed = await post({ sessionId: "s", turnId: "t1", instruction: "Talk", stream: true });
      expect(await streamed.text()).toContain("id: 0-0");
      await vi.waitFor(
        async () => {
          const resumed = await fetch(`${server.url}/v1/sessions/s/turns/t1/events`);
          const ids = [...(await resumed.text()).matchAll(/^id: (.*)$/gm)].map((match) => match[1]);
          expect(ids).toEqual(["0-result"]);
        },
        { timeout: 10_000, interval: 100 },
      );
    } finally {
      release();
      await server.close();
    }
  });
});
