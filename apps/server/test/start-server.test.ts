import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LlmCallOptions, LlmProvider, LlmRequest } from "@aptix/core";
import { ScriptedLlmProvider } from "@aptix/core/testing";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/config/config-error.js";
import { DEFAULT_CATALOG } from "../src/config/default-catalog.js";
import { readServerEnv } from "../src/config/server-env.js";
import { type Logger, silentLogger } from "../src/logging/logger.js";
import { startServer } from "../src/start-server.js";

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
    const lines: string[] = [];
    const logger: Logger = {
      log: (level, message, fields) => lines.push(JSON.stringify({ level, message, ...fields })),
    };
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

    const logged = lines.map(
      (line) => JSON.parse(line) as { message: string; requestId?: string; status?: number },
    );
    expect(logged.map((entry) => entry.message)).toContain("listening");
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

  it("stops start-up with a ConfigError when the config file is bad", async () => {
    await expect(
      startServer(
        readServerEnv({ PORT: "0", DATABASE_URL: "memory://", APTIX_CONFIG: "/nonexistent.json" }),
        silentLogger,
      ),
    ).rejects.toThrow(/APTIX_CONFIG: cannot read/);
  });
});
