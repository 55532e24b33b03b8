import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { step } from "@aptix/testing-llm-servers";
import { afterEach, describe, expect, it } from "vitest";
import { APTIX_BIN, runAptix, runProcess, startAptix } from "./support/aptix-process.js";
import { API_KEY } from "./support/aptix-server.js";
import { startCuttingProxy } from "./support/cutting-proxy.js";
import { openTerminal } from "./support/open-terminal.js";
import { turnStatuses } from "./support/turn-statuses.js";
import { useAptixServer } from "./support/use-aptix-server.js";
import { makeWorkspace, workspaceIdOf } from "./support/workspace-dir.js";

const aptix = useAptixServer();

afterEach(() => {
  const pending = aptix.openai.pendingSteps();
  const invalid = aptix.openai.responseRequests().filter((request) => request.schemaErrors !== undefined);
  aptix.openai.reset();
  expect(pending, "scripted steps left over").toBe(0);
  expect(invalid, "requests that fail OpenAI's CreateResponse schema").toEqual([]);
});

const run = (args: string[], cwd: string, input?: string) =>
  runAptix([...args, "--url", aptix.server.url], {
    cwd,
    env: { APTIX_API_KEY: API_KEY },
    ...(input === undefined ? {} : { input }),
  });

const CART =
  "export function cartTotal(prices: number[]) {\n  return prices.reduce((sum, price) => sum - price, 0);\n}\n";
const FIXED =
  "export function cartTotal(prices: number[]) {\n  return prices.reduce((sum, price) => sum + price, 0);\n}\n";
const CART_PATCH = [
  "--- a/src/cart.ts",
  "+++ b/src/cart.ts",
  "@@ -1,3 +1,3 @@",
  " export function cartTotal(prices: number[]) {",
  "-  return prices.reduce((sum, price) => sum - price, 0);",
  "+  return prices.reduce((sum, price) => sum + price, 0);",
  " }",
  "",
].join("\n");

describe("aptix run: a turn with the workspace's tools", () => {
  it("reads a file, searches, applies a patch: the file changes exactly, and --json ends stdout", async () => {
    const workspace = await makeWorkspace("shop", {
      "src/cart.ts": CART,
      "README.md": "The cart TOTAL is a sum.\n",
    });
    aptix.openai.script(
      step.functionCalls({
        name: "read_file",
        arguments: { path: "src/cart.ts", startLine: null, endLine: null },
        callId: "call_read",
      }),
      step.functionCalls({
        name: "search_files",
        arguments: { query: "total", glob: null },
        callId: "call_search",
      }),
      step.functionCalls({ name: "apply_patch", arguments: { patch: CART_PATCH }, callId: "call_patch" }),
      step.text("Fixed the sign."),
    );
    const result = await run(["run", "Fix the cart total", "--yes", "--json"], workspace.dir);
    expect(result.code, result.stderr).toBe(0);
    expect(await workspace.read("src/cart.ts")).toBe(FIXED);
    expect(result.json()).toMatchObject({
      kind: "final",
      primaryOutputText: "Fixed the sign.",
      turnId: expect.any(String),
    });

    const outputs = aptix.toolOutputs();
    expect(JSON.parse(outputs.get("call_read") ?? "")).toEqual({
      path: "src/cart.ts",
      contents: CART,
      startLine: 1,
      endLine: 3,
      totalLines: 3,
    });
    expect(JSON.parse(outputs.get("call_search") ?? "")).toEqual({
      matches: [
        { path: "README.md", line: 1, text: "The cart TOTAL is a sum." },
        { path: "src/cart.ts", line: 1, text: "export function cartTotal(prices: number[]) {" },
      ],
      truncated: false,
    });
    expect(JSON.parse(outputs.get("call_patch") ?? "")).toEqual({
      applied: true,
      files: [{ path: "src/cart.ts", change: "modified" }],
    });
    // One line per tool call, on stderr with --json (stdout holds the JSON only).
    expect(result.stderr).toMatch(/tool read_file src\/cart\.ts ✓/);
    expect(result.stderr).toMatch(/tool search_files total ✓/);
    expect(result.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("sends the workspace's name and its real path's hash as workspaceId, and offers exactly the default catalog's tools", async () => {
    const workspace = await makeWorkspace("my shop (v2)", { "a.txt": "a\n" });
    aptix.openai.script(step.text("Hi."));
    const result = await run(["run", "Hello", "--json"], workspace.dir);
    expect(result.code, result.stderr).toBe(0);
    const body = aptix.openai.responseRequests()[0]?.body as { tools: Array<{ name: string }> };
    expect(body.tools.map((tool) => tool.name)).toEqual([
      "read_file",
      "list_files",
      "search_files",
      "apply_patch",
      "agent_change_mode",
    ]);
    const trace = await fetch(
      `${aptix.server.url}/v1/sessions/${result.json().sessionId}/turns/${result.json().turnId}/trace`,
      { headers: { authorization: `Bearer ${API_KEY}` } },
    ).then(
      (response) =>
        response.json() as Promise<{ result: { rounds: Array<{ request: { workspaceId?: string } }> } }>,
    );
    // The name's spaces and brackets made `-`; the hash of the real path makes it this folder's own.
    const hash = workspaceIdOf(workspace.dir).slice(-8);
    expect(trace.result.rounds[0]?.request.workspaceId).toBe(`my-shop--v2--${hash}`);
  });

  it("shows the patch and applies it when the user answers y", async () => {
    const workspace = await makeWorkspace("confirm-yes", { "src/cart.ts": CART });
    aptix.openai.script(
      step.functionCalls({ name: "apply_patch", arguments: { patch: CART_PATCH } }),
      step.text("Done."),
    );
    const result = await run(["run", "Fix it"], workspace.dir, "y\n");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("+  return prices.reduce((sum, price) => sum + price, 0);");
    expect(result.stdout).toContain("Apply this patch? [y/N]");
    expect(await workspace.read("src/cart.ts")).toBe(FIXED);
  });
});

describe("aptix run: patches are all or nothing", () => {
  const files = { "src/cart.ts": CART, "src/tax.ts": "export const TAX = 0.2;\n" };
  const twoFilePatch = (taxContext: string) =>
    [
      CART_PATCH.trimEnd(),
      "--- a/src/tax.ts",
      "+++ b/src/tax.ts",
      "@@ -1 +1 @@",
      `-${taxContext}`,
      "+export const TAX = 0.25;",
      "",
    ].join("\n");

  it("a declined patch is an errorMessage and changes no file", async () => {
    const workspace = await makeWorkspace("declined", files);
    const before = await workspace.snapshot();
    aptix.openai.script(
      step.functionCalls({
        name: "apply_patch",
        arguments: { patch: twoFilePatch("export const TAX = 0.2;") },
        callId: "call_declined",
      }),
      step.text("Understood."),
    );
    const result = await run(["run", "Change both", "--json"], workspace.dir, "n\n");
    expect(result.code, result.stderr).toBe(0);
    expect(await workspace.snapshot()).toEqual(before);
    expect(aptix.toolOutputs().get("call_declined")).toContain("The user declined the patch");
  });

  it("a patch one of whose files does not apply changes no file, not even the ones that would", async () => {
    const workspace = await makeWorkspace("not-applying", files);
    const before = await workspace.snapshot();
    aptix.openai.script(
      step.functionCalls({
        name: "apply_patch",
        arguments: { patch: twoFilePatch("export const TAX = 0.3;") },
        callId: "call_stale",
      }),
      step.functionCalls({
        name: "apply_patch",
        arguments: { patch: "this is not a diff" },
        callId: "call_garbage",
      }),
      step.text("It did not apply."),
    );
    const result = await run(["run", "Change both", "--yes"], workspace.dir);
    expect(result.code, result.stderr).toBe(0);
    expect(await workspace.snapshot()).toEqual(before);
    expect(aptix.toolOutputs().get("call_stale")).toContain("does not apply to src/tax.ts");
    expect(aptix.toolOutputs().get("call_garbage")).toContain("holds no hunk");
  });

  it("creates and deletes files with /dev/null headers", async () => {
    const workspace = await makeWorkspace("create-delete", files);
    const patch = [
      "--- /dev/null",
      "+++ b/src/new/discount.ts",
      "@@ -0,0 +1 @@",
      "+export const DISCOUNT = 0.1;",
      "--- a/src/tax.ts",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-export const TAX = 0.2;",
      "",
    ].join("\n");
    aptix.openai.script(
      step.functionCalls({ name: "apply_patch", arguments: { patch } }),
      step.text("Done."),
    );
    const result = await run(["run", "Swap tax for discount", "--yes"], workspace.dir);
    expect(result.code, result.stderr).toBe(0);
    expect(await workspace.read("src/new/discount.ts")).toBe("export const DISCOUNT = 0.1;\n");
    expect(existsSync(join(workspace.dir, "src/tax.ts"))).toBe(false);
  });
});

describe("aptix run: the tools stay inside the workspace", () => {
  it("skips what .gitignore ignores in list_files and search_files, and matches globs", async () => {
    const workspace = await makeWorkspace("ignoring", {
      ".gitignore": "dist/\n*.log\n",
      "src/app.ts": "const needle = 1;\n",
      "src/lib/.gitignore": "generated.ts\n",
      "src/lib/generated.ts": "const needle = 2;\n",
      "src/lib/util.ts": "const NEEDLE = 3;\n",
      "dist/app.js": "const needle = 4;\n",
      "debug.log": "needle\n",
      "docs/guide.md": "no match here\n",
    });
    aptix.openai.script(
      step.functionCalls([
        { name: "list_files", arguments: { path: null, glob: null }, callId: "call_all" },
        { name: "list_files", arguments: { path: "src", glob: "*.ts" }, callId: "call_ts" },
        { name: "search_files", arguments: { query: "Needle", glob: "src/**" }, callId: "call_search" },
      ]),
      step.text("Listed."),
    );
    const result = await run(["run", "List", "--yes"], workspace.dir);
    expect(result.code, result.stderr).toBe(0);
    const outputs = aptix.toolOutputs();
    expect(JSON.parse(outputs.get("call_all") ?? "").files).toEqual([
      ".gitignore",
      "docs/guide.md",
      "src/app.ts",
      "src/lib/.gitignore",
      "src/lib/util.ts",
    ]);
    expect(JSON.parse(outputs.get("call_ts") ?? "").files).toEqual(["src/app.ts", "src/lib/util.ts"]);
    expect(JSON.parse(outputs.get("call_search") ?? "").matches).toEqual([
      { path: "src/app.ts", line: 1, text: "const needle = 1;" },
      { path: "src/lib/util.ts", line: 1, text: "const NEEDLE = 3;" },
    ]);
  });
});

describe("aptix run: streaming", () => {
  it("resumes a stream cut mid-turn with no text lost or repeated", async () => {
    const workspace = await makeWorkspace("resume", { "a.txt": "a\n" });
    const proxy = await startCuttingProxy(aptix.server.url, 2);
    try {
      aptix.openai.script(step.text(["Hello ", "from ", "a ", "resumed ", "stream."], { chunkDelayMs: 20 }));
      const result = await runAptix(["run", "Say hello", "--url", proxy.url], {
        cwd: workspace.dir,
        env: { APTIX_API_KEY: API_KEY },
      });
      expect(result.code, result.stderr).toBe(0);
      expect(proxy.cut()).toBe(true);
      expect(result.stdout).toBe("Hello from a resumed stream.\n");
      const resumed = proxy.requests.find(
        (request) => request.method === "GET" && request.path.endsWith("/events"),
      );
      expect(resumed?.lastEventId).toEqual(expect.any(String));
    } finally {
      await proxy.close();
    }
  });
});

/** Waits until the scripted model has had more than `calls` requests. */
async function providerCalled(calls: number): Promise<void> {
  for (let waited = 0; aptix.openai.responseRequests().length <= calls; waited += 20) {
    if (waited > 30_000) throw new Error("the provider was never called");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("aptix run: Ctrl-C", () => {
  it("cancels the turn on the service and exits 130 with one line", async () => {
    const workspace = await makeWorkspace("run-sigint", { "a.txt": "a\n" });
    aptix.openai.script(step.text("Never delivered.", { delayMs: 120_000 }));
    const calls = aptix.openai.responseRequests().length;
    const started = startAptix(
      ["run", "Take forever", "--session", "run-sigint", "--url", aptix.server.url],
      {
        cwd: workspace.dir,
        env: { APTIX_API_KEY: API_KEY },
      },
    );
    await providerCalled(calls);
    started.child.kill("SIGINT");
    const result = await started.finished;
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toMatch(
      /^aptix: stopped \(Ctrl-C\): turn [0-9a-f-]{36} is cancelled on the service\.\n$/,
    );
    expect(result.stdout).not.toContain("Never delivered.");
    expect(await turnStatuses(aptix.server.url, "run-sigint")).toEqual(["cancelled"]);
  });

  it("answers the patch's question at once in a terminal: the turn is cancelled, no file changes, exit 130", async () => {
    const workspace = await makeWorkspace("run-sigint-ask", { "src/cart.ts": CART });
    aptix.openai.script(step.functionCalls({ name: "apply_patch", arguments: { patch: CART_PATCH } }));
    const term = openTerminal(
      aptix.server.url,
      ["run", "Fix the cart", "--session", "run-sigint-ask"],
      workspace.dir,
    );
    try {
      await term.waitFor("Apply this patch? [y/N]");
      // No Enter: Ctrl-C alone answers.
      term.type("\x03");
      expect(await term.exited).toBe(130);
    } finally {
      term.kill();
    }
    expect(term.text()).toMatch(
      /aptix: stopped \(Ctrl-C\): turn [0-9a-f-]{36} is cancelled on the service\./,
    );
    expect(await turnStatuses(aptix.server.url, "run-sigint-ask")).toEqual(["cancelled"]);
    expect(await workspace.read("src/cart.ts")).toBe(CART);
  });

  it("a second Ctrl-C exits 130 at once when the service does not answer the cancel", async () => {
    const workspace = await makeWorkspace("run-sigint-twice", { "a.txt": "a\n" });
    // A service that takes every request and answers none.
    const paths: string[] = [];
    const silent = createServer((request) => {
      paths.push(request.url ?? "");
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as AddressInfo;
    const seen = async (what: RegExp) => {
      for (let waited = 0; !paths.some((path) => what.test(path)); waited += 20) {
        if (waited > 30_000) throw new Error(`no request matched ${what}: ${paths.join(", ")}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    try {
      const started = startAptix(["run", "Hello", "--url", `http://127.0.0.1:${port}`], {
        cwd: workspace.dir,
      });
      await seen(/^\/v1\//);
      started.child.kill("SIGINT");
      await seen(/\/cancel$/);
      started.child.kill("SIGINT");
      const result = await started.finished;
      expect(result.code).toBe(130);
      expect(result.stderr).toBe(
        "aptix: stopped (Ctrl-C) without waiting for the service to cancel the turn.\n",
      );
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe("aptix run: what it prints besides the answer", () => {
  it("prints the session to go on with after a failed turn, but none after a refused one", async () => {
    const workspace = await makeWorkspace("run-refused", { "a.txt": "a\n" });
    aptix.openai.script(step.error(500));
    const failed = await run(["run", "Fail", "--session", "run-failed"], workspace.dir);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("session run-failed");
    const refused = await runAptix(["run", "Hello", "--session", "run-refused", "--url", aptix.server.url], {
      cwd: workspace.dir,
      env: { APTIX_API_KEY: "not-the-key-0123456789abcdef" },
    });
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toContain("UNAUTHORIZED");
    expect(refused.stderr).not.toContain("session run-refused");
  });
});

describe("aptix: exit codes", () => {
  it("prints its version for --version", async () => {
    const workspace = await makeWorkspace("version", { "a.txt": "a\n" });
    const { version } = JSON.parse(
      readFileSync(fileURLToPath(new URL("../package.json", import.meta.url)), "utf8"),
    );
    const result = await runAptix(["--version"], { cwd: workspace.dir });
    expect(result).toMatchObject({ code: 0, stdout: `aptix ${version}\n`, stderr: "" });
  });

  it("exits 1 when the turn fails, with the errors as the --json line", async () => {
    const workspace = await makeWorkspace("failing", { "a.txt": "a\n" });
    aptix.openai.script(step.error(500));
    const result = await run(["run", "Fail", "--json"], workspace.dir);
    expect(result.code).toBe(1);
    expect(result.json()).toMatchObject({ errors: [{ code: "PROVIDER_ERROR" }] });
  });

  it.each([
    [["frobnicate"], /Unknown command "frobnicate"/],
    [["run"], /aptix run needs an instruction/],
    [["run", "x", "--colour"], /Unknown option '--colour'/],
    [["session"], /aptix session needs a session id/],
    [["chat", "--session", "not valid!"], /--session "not valid!" must be/],
    [["run", "x", "y"], /unexpected argument "y"/],
    [[], /Name a command/],
    [["run", "x", "--workspace", "no-such-dir"], /no-such-dir is not a directory/],
    [["acp", "--workspace", "."], /aptix acp takes its workspaces.*--workspace do not apply/],
    [["usage", "--from", "2026-01-01"], /--to is required with --from/],
    [["usage", "--to", "2026-01-01"], /--from is required with --to/],
    [["usage", "--from", "2026-02-30", "--to", "2026-03-01"], /--from must be an ISO 8601 date/],
    [["usage", "--group-by", "week"], /--group-by must be one of "day", "model", "session"/],
  ])("exits 2 with one line saying why for %j", async (args, message) => {
    const workspace = await makeWorkspace("usage", { "a.txt": "a\n" });
    const result = await runAptix(args, { cwd: workspace.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/^aptix: [^\n]* \(aptix --help lists the commands and options\)\n$/);
  });

  it("answers aptix acp --help with what an editor's configuration needs", async () => {
    const workspace = await makeWorkspace("acp-help", { "a.txt": "a\n" });
    const result = await runAptix(["acp", "--help"], { cwd: workspace.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: aptix acp \[options\]\n/);
    expect(result.stdout).toContain('"args": ["acp"]');
    expect(result.stdout).not.toContain("Usage: aptix <command>");
  });

  it("ends quietly when the reader of its output goes away, as in `aptix --help | head -1`", async () => {
    const child = spawn(process.execPath, [APTIX_BIN, "--help"], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy(); // The reader is gone before the first write: it fails with EPIPE.
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });

  it("exits 1 with a clear message when the service cannot be reached", async () => {
    const workspace = await makeWorkspace("unreachable", { "a.txt": "a\n" });
    const result = await runAptix(["run", "Hello", "--url", "http://127.0.0.1:9"], { cwd: workspace.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("cannot reach the service at http://127.0.0.1:9");
  });
});

describe("pnpm aptix at the repository root", () => {
  it("runs the CLI from its sources, with the directory it was called from as the workspace", async () => {
    const workspace = await makeWorkspace("from-sources", { "marker.txt": "called from here\n" });
    aptix.openai.script(
      step.functionCalls({
        name: "read_file",
        arguments: { path: "marker.txt", startLine: null, endLine: null },
        callId: "call_marker",
      }),
      step.text("Found it."),
    );
    const root = fileURLToPath(new URL("../../../", import.meta.url));
    const result = await runProcess(
      "pnpm",
      ["--dir", root, "--silent", "aptix", "run", "Read the marker", "--json", "--url", aptix.server.url],
      {
        cwd: workspace.dir,
        env: { APTIX_API_KEY: API_KEY },
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toMatchObject({ primaryOutputText: "Found it." });
    expect(aptix.toolOutputs().get("call_marker")).toContain("called from here");
  });
});

describe("aptix session", () => {
  it("prints the session's mode and turns", async () => {
    const workspace = await makeWorkspace("sessions", { "a.txt": "a\n" });
    aptix.openai.script(step.text("One."), step.text("Two."));
    const piped = await run(["run", "First", "--session", "cli-session-1"], workspace.dir);
    // Its output piped: no spinner frames, no escape codes.
    expect(piped.stdout + piped.stderr).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    expect((piped.stdout + piped.stderr).includes("\u001b")).toBe(false);
    await run(["run", "Second", "--session", "cli-session-1"], workspace.dir);
    const shown = await run(["session", "cli-session-1"], workspace.dir);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("Session cli-session-1 · mode General (general)");
    expect(shown.stdout.match(/completed/g)).toHaveLength(2);
    // Where the session stood: its last messages, in order.
    expect(shown.stdout).toMatch(/Last messages:\nyou: First\nagent: One\.\nyou: Second\nagent: Two\./);
    const unknown = await run(["session", "no-such-session", "--json"], workspace.dir);
    expect(unknown.code).toBe(1);
    expect(unknown.json()).toMatchObject({ successful: false, errors: [{ code: "SESSION_NOT_FOUND" }] });
  });
});

describe("aptix sessions and --continue", () => {
  it("lists the sessions newest first, and run --continue goes on in the workspace's latest session", async () => {
    const workspace = await makeWorkspace("continued", { "a.txt": "a\n" });
    const other = await makeWorkspace("elsewhere", { "a.txt": "a\n" });
    aptix.openai.script(step.text("One."), step.text("Other."), step.text("Two."), step.text("Fresh."));
    await run(["run", "First here", "--session", "cli-continue-1"], workspace.dir);
    await run(["run", "Somewhere else", "--session", "cli-continue-2"], other.dir);
    const continued = await run(["run", "Go on", "--continue", "--json"], workspace.dir);
    expect(continued.code, continued.stderr).toBe(0);
    expect(continued.json()).toMatchObject({ sessionId: "cli-continue-1", primaryOutputText: "Two." });

    const listed = await run(["sessions"], workspace.dir);
    expect(listed.code, listed.stderr).toBe(0);
    const first = listed.stdout.indexOf("cli-continue-1");
    expect(first).toBeGreaterThanOrEqual(0);
    expect(first).toBeLessThan(listed.stdout.indexOf("cli-continue-2"));
    expect(listed.stdout).toContain("First here");
    const json = await run(["sessions", "--json"], workspace.dir);
    expect(json.json()).toMatchObject({
      sessions: expect.arrayContaining([expect.objectContaining({ sessionId: "cli-continue-2" })]),
    });

    // A workspace without sessions starts a new one, and --continue with --session is a usage error.
    const fresh = await makeWorkspace("never-used", { "a.txt": "a\n" });
    const started = await run(["run", "Hello", "--continue"], fresh.dir);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toContain("starting a new one");
    const both = await run(["run", "x", "--continue", "--session", "s"], workspace.dir);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--continue and --session");
  });
});
