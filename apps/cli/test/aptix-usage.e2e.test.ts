import { step } from "@aptix/testing-llm-servers";
import { describe, expect, it } from "vitest";
import { runAptix } from "./support/aptix-process.js";
import { API_KEY } from "./support/aptix-server.js";
import { useAptixServer } from "./support/use-aptix-server.js";
import { makeWorkspace } from "./support/workspace-dir.js";

const aptix = useAptixServer();

const run = (args: string[], cwd: string) =>
  runAptix([...args, "--url", aptix.server.url], { cwd, env: { APTIX_API_KEY: API_KEY } });

describe("aptix usage", () => {
  it("prints the caller's usage by day, model or session with the total, as text or --json, and names a bad option", async () => {
    const workspace = await makeWorkspace("metered", { "README.md": "Metered.\n" });
    aptix.openai.script(
      step.text("One.", {
        usage: { input_tokens: 1_200, output_tokens: 80, input_tokens_details: { cached_tokens: 1_000 } },
      }),
    );
    expect((await run(["run", "Say one", "--session", "metered-1"], workspace.dir)).code).toBe(0);

    // gpt-5.1 (the default catalog's model) by the built-in table: 200 uncached input at $1.25, 1,000 cached at
    // $0.125 and 80 output at $10, a million tokens.
    const bySession = await run(["usage", "--group-by", "session", "--json"], workspace.dir);
    expect(bySession.code, bySession.stderr).toBe(0);
    expect(bySession.json()).toEqual({
      buckets: [
        {
          key: "metered-1",
          inputTokens: 1_200,
          cachedInputTokens: 1_000,
          outputTokens: 80,
          llmCalls: 1,
          costUsd: 0.001175,
        },
      ],
      total: {
        inputTokens: 1_200,
        cachedInputTokens: 1_000,
        outputTokens: 80,
        llmCalls: 1,
        costUsd: 0.001175,
      },
    });

    const today = new Date().toISOString().slice(0, 10);
    const byDay = await run(["usage", "--from", today, "--to", today], workspace.dir);
    expect(byDay.code, byDay.stderr).toBe(0);
    expect(byDay.stdout).toContain(`${today} 1200 in (1000 cached) · 80 out · 1 call · $0.0012`);
    expect(byDay.stdout).toContain("total 1200 in (1000 cached) · 80 out · 1 call · $0.0012");

    // A mistake in the options is a usage error, told before any request.
    const bad = await run(["usage", "--group-by", "week"], workspace.dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--group-by must be one of "day", "model", "session"');
    const halfRange = await run(["usage", "--from", today], workspace.dir);
    expect(halfRange.code).toBe(2);
    expect(halfRange.stderr).toContain("--to is required with --from");
    const misplaced = await run(["sessions", "--from", today], workspace.dir);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain("--from, --to and --group-by apply to usage only.");
  });

  it("reads every page of the session grouping (the service answers 100 sessions a page)", async () => {
    const workspace = await makeWorkspace("paged", { "README.md": "Paged.\n" });
    const sessions = Array.from({ length: 101 }, (_, index) => `paged-${String(index).padStart(3, "0")}`);
    aptix.openai.script(
      ...sessions.map(() => step.text("Noted.", { usage: { input_tokens: 10, output_tokens: 1 } })),
    );
    for (const sessionId of sessions) {
      const answered = await fetch(`${aptix.server.url}/v1/agent/execute`, {
        method: "POST",
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ sessionId, turnId: "t1", instruction: "Note it." }),
      });
      expect(answered.status).toBe(200);
    }
    const bySession = await run(["usage", "--group-by", "session", "--json"], workspace.dir);
    expect(bySession.code, bySession.stderr).toBe(0);
    const report = bySession.json() as { buckets: { key: string }[]; nextCursor?: string };
    const paged = report.buckets.map((bucket) => bucket.key).filter((key) => key.startsWith("paged-"));
    expect(paged).toEqual(sessions);
    expect(report.nextCursor).toBeUndefined();
  });
});
