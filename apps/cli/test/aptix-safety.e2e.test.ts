import { existsSync } from "node:fs";
import { mkdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { step } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runAptix } from "./support/aptix-process.js";
import { API_KEY, type AptixServer, startAptixServer } from "./support/aptix-server.js";
import { makeWorkspace, removeWorkspaces } from "./support/workspace-dir.js";

/**
 * Issue 27's findings against the terminal agent, each played as the attack was: the built binary, the real
 * server, a scripted model steered to turn the CLI against its user.
 */
let aptix: AptixServer;

beforeAll(async () => {
  aptix = await startAptixServer();
});

afterAll(async () => {
  await aptix?.close();
  await removeWorkspaces();
});

afterEach(() => {
  const pending = aptix.openai.pendingSteps();
  aptix.openai.reset();
  expect(pending, "scripted steps left over").toBe(0);
});

const run = (args: string[], cwd: string) =>
  runAptix([...args, "--url", aptix.server.url], { cwd, env: { APTIX_API_KEY: API_KEY } });

const errorOf = (callId: string) =>
  (JSON.parse(aptix.toolOutputs().get(callId) ?? "{}") as { error?: string }).error;

const creating = (path: string, line: string) =>
  ["--- /dev/null", `+++ b/${path}`, "@@ -0,0 +1 @@", `+${line}`, ""].join("\n");

describe("finding 1: no write through a symlink", () => {
  it("refuses a patch creating a dangling symlink's path, and its target outside stays absent", async () => {
    const workspace = await makeWorkspace("dangling", { "src/app.ts": "export const app = 1;\n" });
    await symlink("../outside/x.txt", join(workspace.dir, "dangling"));
    await symlink(join(workspace.outside, "y.txt"), join(workspace.dir, "absolute-dangling"));
    await mkdir(join(workspace.dir, "real-dir"));
    await symlink("real-dir", join(workspace.dir, "dir-link"));
    await symlink("src/app.ts", join(workspace.dir, "inside-link.ts"));
    aptix.openai.script(
      step.functionCalls([
        {
          name: "apply_patch",
          arguments: { patch: creating("dangling", "planted") },
          callId: "call_dangling",
        },
        {
          name: "apply_patch",
          arguments: { patch: creating("absolute-dangling", "planted") },
          callId: "call_absolute",
        },
        {
          name: "apply_patch",
          arguments: { patch: creating("dir-link/new.txt", "through a folder link") },
          callId: "call_dir_link",
        },
        {
          name: "apply_patch",
          arguments: {
            patch: [
              "--- a/inside-link.ts",
              "+++ b/inside-link.ts",
              "@@ -1 +1 @@",
              "-export const app = 1;",
              "+export const app = 2;",
              "",
            ].join("\n"),
          },
          callId: "call_inside_link",
        },
        {
          name: "read_file",
          arguments: { path: "inside-link.ts", startLine: null, endLine: null },
          callId: "call_read_link",
        },
      ]),
      step.text("Done."),
    );
    const result = await run(["run", "Create the files", "--yes"], workspace.dir);
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(workspace.outside, "x.txt"))).toBe(false);
    expect(existsSync(join(workspace.outside, "y.txt"))).toBe(false);
    expect(existsSync(join(workspace.dir, "real-dir/new.txt"))).toBe(false);
    expect(await workspace.read("src/app.ts")).toBe("export const app = 1;\n");
    expect(errorOf("call_dangling")).toBe(
      "dangling is a symlink (dangling): apply_patch never writes through one.",
    );
    expect(errorOf("call_absolute")).toContain("is a symlink");
    expect(errorOf("call_dir_link")).toBe(
      "dir-link/new.txt goes through a symlink (dir-link): apply_patch never writes through one.",
    );
    expect(errorOf("call_inside_link")).toContain("is a symlink");
    // A link that stays inside is still read.
    expect(JSON.parse(aptix.toolOutputs().get("call_read_link") ?? "")).toMatchObject({
      contents: "export const app = 1;\n",
    });
    expect(result.stdout).not.toContain("applied");
  });
});

describe("finding 2: .git and ignored files are closed", () => {
  const gitConfig = "[core]\n\trepositoryformatversion = 0\n";
  const fsmonitor = (path: string) =>
    [
      `--- a/${path}`,
      `+++ b/${path}`,
      "@@ -1,2 +1,3 @@",
      " [core]",
      '+\tfsmonitor = "touch pwned"',
      " \trepositoryformatversion = 0",
      "",
    ].join("\n");

  it("refuses to read, list, search or patch .git at any depth", async () => {
    const workspace = await makeWorkspace("git-closed", {
      ".git/config": gitConfig,
      "sub/.git/config": gitConfig,
      "src/app.ts": "export const app = 1;\n",
    });
    await symlink(".git/config", join(workspace.dir, "config-link"));
    aptix.openai.script(
      step.functionCalls([
        { name: "apply_patch", arguments: { patch: fsmonitor(".git/config") }, callId: "call_git" },
        { name: "apply_patch", arguments: { patch: fsmonitor("sub/.git/config") }, callId: "call_nested" },
        {
          name: "apply_patch",
          arguments: { patch: creating(".git/hooks/pre-commit", "touch pwned") },
          callId: "call_hook",
        },
        {
          name: "read_file",
          arguments: { path: "sub/.git/config", startLine: null, endLine: null },
          callId: "call_read",
        },
        {
          name: "read_file",
          arguments: { path: "config-link", startLine: null, endLine: null },
          callId: "call_read_link",
        },
        { name: "list_files", arguments: { path: ".git", glob: null }, callId: "call_list_git" },
        { name: "list_files", arguments: { path: null, glob: null }, callId: "call_list" },
        { name: "search_files", arguments: { query: "repositoryformat", glob: null }, callId: "call_search" },
      ]),
      step.text("Done."),
    );
    const result = await run(["run", "Configure git", "--yes"], workspace.dir);
    expect(result.code, result.stderr).toBe(0);
    expect(await workspace.snapshot()).toMatchObject({
      ".git/config": gitConfig,
      "sub/.git/config": gitConfig,
    });
    expect(existsSync(join(workspace.dir, ".git/hooks/pre-commit"))).toBe(false);
    expect(errorOf("call_git")).toBe(".git/config is inside .git, which the tools never open.");
    expect(errorOf("call_nested")).toBe("sub/.git/config is inside .git, which the tools never open.");
    expect(errorOf("call_hook")).toContain("is inside .git");
    expect(errorOf("call_read")).toContain("is inside .git");
    expect(errorOf("call_read_link")).toBe("config-link is inside .git, which the tools never open.");
    expect(errorOf("call_list_git")).toContain("is inside .git");
    expect(JSON.parse(aptix.toolOutputs().get("call_list") ?? "")).toEqual({
      files: ["src/app.ts"],
      truncated: false,
    });
    expect(JSON.parse(aptix.toolOutputs().get("call_search") ?? "")).toEqual({
      matches: [],
      truncated: false,
    });
  });

  const ignoringFiles = {
    ".gitignore": ".env\ndist/\n",
    ".env": "API_TOKEN=s3cr3t-value\n",
    "dist/app.js": "built\n",
    "src/app.ts": "export const app = 1;\n",
  };
  const ignoredCalls = () =>
    step.functionCalls([
      { name: "read_file", arguments: { path: ".env", startLine: null, endLine: null }, callId: "call_env" },
      { name: "list_files", arguments: { path: "dist", glob: null }, callId: "call_list_dist" },
      { name: "search_files", arguments: { query: "s3cr3t", glob: null }, callId: "call_search" },
      {
        name: "apply_patch",
        arguments: {
          patch: ["--- a/.env", "+++ b/.env", "@@ -1 +1 @@", "-API_TOKEN=guess", "+API_TOKEN=x", ""].join(
            "\n",
          ),
        },
        callId: "call_patch_env",
      },
      { name: "apply_patch", arguments: { patch: creating("dist/new.js", "x") }, callId: "call_create" },
      {
        name: "apply_patch",
        arguments: {
          patch: ["--- a/.gitignore", "+++ b/.gitignore", "@@ -1,2 +1 @@", "-.env", " dist/", ""].join("\n"),
        },
        callId: "call_unignore",
      },
    ]);

  it("refuses what .gitignore ignores, and .gitignore itself, to every tool", async () => {
    const workspace = await makeWorkspace("ignored-closed", ignoringFiles);
    aptix.openai.script(ignoredCalls(), step.text("Done."));
    const result = await run(["run", "Show me the secrets", "--yes"], workspace.dir);
    expect(result.code, result.stderr).toBe(0);
    expect(await workspace.snapshot()).toEqual(ignoringFiles);
    expect(existsSync(join(workspace.dir, "dist/new.js"))).toBe(false);
    expect(errorOf("call_env")).toBe(
      ".env is ignored by .gitignore: the tools open it only with --allow-ignored.",
    );
    expect(errorOf("call_list_dist")).toContain("is ignored by .gitignore");
    expect(JSON.parse(aptix.toolOutputs().get("call_search") ?? "")).toEqual({
      matches: [],
      truncated: false,
    });
    // A patch's context must not tell the model whether it guessed an ignored file's lines.
    expect(errorOf("call_patch_env")).toContain("is ignored by .gitignore");
    expect(errorOf("call_create")).toContain("is ignored by .gitignore");
    expect(errorOf("call_unignore")).toContain("is a .gitignore file");
    expect([...aptix.toolOutputs().values()].join("\n")).not.toContain("s3cr3t");
  });

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

describe("finding 8: what the model sends cannot drive the terminal", () => {
  it("prints control characters in answers, patch previews and tool lines as visible escapes", async () => {
    const workspace = await makeWorkspace("escapes", { "notes.txt": "one\ntwo\nthree\n" });
    const patch = [
      "--- a/notes.txt",
      "+++ b/notes.txt",
      "@@ -1,3 +1,4 @@",
      " one",
      "+harmless\u001b[1A\u001b[2K\u001b[1A\u001b[2K",
      " two",
      " three",
      "",
    ].join("\n");
    aptix.openai.script(
      step.functionCalls([
        { name: "apply_patch", arguments: { patch }, callId: "call_patch" },
        {
          name: "read_file",
          arguments: { path: "\u001b[2Jmissing\u0007.txt", startLine: null, endLine: null },
          callId: "call_read",
        },
      ]),
      // The title sequence split across two deltas: each character is made visible on its own.
      step.text(["Done \u001b", "]0;pwned\u0007 \u009b31m\r\u202eend"]),
    );
    const result = await run(["run", "Add a line", "--yes"], workspace.dir);
    expect(result.code, result.stderr).toBe(0);
    for (const raw of ["\u001b", "\u0007", "\u009b", "\r", "\u202e"])
      expect(result.stdout + result.stderr).not.toContain(raw);
    expect(result.stdout).toContain("+harmless\\x1b[1A\\x1b[2K\\x1b[1A\\x1b[2K");
    expect(result.stdout).toContain("Done \\x1b]0;pwned\\x07 \\x9b31m\\x0d\\u202eend");
    expect(result.stdout).toContain("tool read_file \\x1b[2Jmissing\\x07.txt ✗");
    // The file still gets the bytes the model sent: only what is printed is made visible.
    expect(await workspace.read("notes.txt")).toBe(
      "one\nharmless\u001b[1A\u001b[2K\u001b[1A\u001b[2K\ntwo\nthree\n",
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
