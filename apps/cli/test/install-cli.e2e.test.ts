/**
 * `pnpm install:cli` as a user runs it from a checkout, into a temporary npm prefix: the installed `aptix` runs
 * from there alone (its own copy of its dependencies), prints its help and answers an ACP editor's `initialize`.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

// It builds what the CLI runs on first (turbo's cache makes that quick when nothing changed).
vi.setConfig({ testTimeout: 60_000, hookTimeout: 600_000 });

const root = fileURLToPath(new URL("../../..", import.meta.url));
let prefix: string;
let aptix: string;

beforeAll(async () => {
  prefix = await mkdtemp(join(tmpdir(), "aptix-prefix-"));
  const installed = spawnSync("pnpm", ["install:cli"], {
    cwd: root,
    env: { ...process.env, npm_config_prefix: prefix },
    encoding: "utf8",
  });
  if (installed.status !== 0)
    throw new Error(`pnpm install:cli failed:\n${installed.stdout}${installed.stderr}`);
  expect(installed.stdout).toContain(`installed aptix as ${join(prefix, "bin", "aptix")}`);
  aptix = join(prefix, "bin", "aptix");
});

afterAll(async () => {
  if (prefix) await rm(prefix, { recursive: true, force: true });
});

describe("pnpm install:cli", () => {
  it("installs an aptix that prints its help", () => {
    const help = spawnSync(aptix, ["--help"], { encoding: "utf8", cwd: tmpdir() });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: aptix <command> \[options\]/);
  });

  it("installs an aptix whose acp answers an editor's initialize", async () => {
    const agent = spawn(aptix, ["acp", "--url", "http://127.0.0.1:9"], { cwd: tmpdir() });
    let output = "";
    agent.stdout.setEncoding("utf8");
    const firstLine = new Promise<string>((resolve) => {
      agent.stdout.on("data", (chunk: string) => {
        output += chunk;
        if (output.includes("\n")) resolve(output.slice(0, output.indexOf("\n")));
      });
    });
    agent.stdin.write(
      `${JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: 1, clientCapabilities: {} },
      })}\n`,
    );
    const answer = JSON.parse(await firstLine) as { id: number; result?: { protocolVersion: number } };
    agent.stdin.end();
    await new Promise((resolve) => agent.on("exit", resolve));
    expect(answer).toMatchObject({ id: 1, result: { protocolVersion: 1 } });
  });
});
