import { execFileSync } from "node:child_process";
import { chown, mkdir, realpath } from "node:fs/promises";
import { join } from "node:path";
import { step } from "@aptix/testing-llm-servers";
import { afterEach, describe, expect, it } from "vitest";
import { runAptix } from "./support/aptix-process.js";
import { API_KEY } from "./support/aptix-server.js";
import { useAptixServer } from "./support/use-aptix-server.js";
import { makeWorkspace, workspaceIdOf } from "./support/workspace-dir.js";

/** Which workspace a command works in, what it is called, where the service is, and what aptix says of it. */
const aptix = useAptixServer();

afterEach(() => {
  const pending = aptix.openai.pendingSteps();
  aptix.openai.reset();
  expect(pending, "scripted steps left over").toBe(0);
});

/** `aptix <args>` with the service named by APTIX_URL, as a user who set it once would run it. */
const run = (args: string[], cwd: string, env: Record<string, string> = {}) =>
  runAptix(args, { cwd, env: { APTIX_API_KEY: API_KEY, APTIX_URL: aptix.server.url, ...env } });

/** A git repository (`git init`) with `files`, in a temporary folder named `name`. */
async function makeRepository(name: string, files: Record<string, string>) {
  const workspace = await makeWorkspace(name, files);
  execFileSync("git", ["init", "--quiet", workspace.dir]);
  return workspace;
}

describe("aptix: the service's URL", () => {
  it("takes the service from APTIX_URL, and --url over it", async () => {
    const workspace = await makeWorkspace("url-env", { "a.md": "# A\n" });
    const indexed = await run(["index", "--json"], workspace.dir);
    expect(indexed.code, indexed.stderr).toBe(0);
    expect(indexed.json()).toMatchObject({ files: 1 });
    const overridden = await runAptix(["index", "--url", aptix.server.url], {
      cwd: workspace.dir,
      env: { APTIX_API_KEY: API_KEY, APTIX_URL: "http://127.0.0.1:9" },
    });
    expect(overridden.code, overridden.stderr).toBe(0);
  });

  it("--help tells APTIX_URL, the default workspace and its id, and where chat's commands are listed", async () => {
    const workspace = await makeWorkspace("help", { "a.md": "# A\n" });
    const help = await runAptix(["--help"], { cwd: workspace.dir });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("(default: $APTIX_URL, else http://127.0.0.1:8787)");
    expect(help.stdout).toContain("the root of the git\n");
    expect(help.stdout).toContain("8 hex digits of the");
    expect(help.stdout).toContain("/help lists");
  });

  it("refuses an APTIX_URL that is not an http(s) URL, naming it, with exit code 2", async () => {
    const workspace = await makeWorkspace("url-bad", { "a.md": "# A\n" });
    const result = await runAptix(["index"], { cwd: workspace.dir, env: { APTIX_URL: "ftp://x" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("aptix: APTIX_URL ftp://x is not an http(s) URL.");
  });
});

describe("aptix: the workspace and its id", () => {
  it("names a workspace by its folder's name and its real path's hash: two folders named app get two indexes", async () => {
    const first = await makeWorkspace("app", { "a.md": "# First\n" });
    const second = await makeWorkspace("app", { "a.md": "# Second\n", "b.md": "# B\n" });
    const one = await run(["index", "--json"], first.dir);
    const two = await run(["index", "--json"], second.dir);
    expect(one.json().workspaceId).toBe(workspaceIdOf(first.dir));
    expect(two.json().workspaceId).toBe(workspaceIdOf(second.dir));
    expect(one.json().workspaceId).toMatch(/^app-[0-9a-f]{8}$/);
    expect(one.json().workspaceId).not.toBe(two.json().workspaceId);
    expect(await aptix.documentsIn(workspaceIdOf(first.dir))).toBe(1);
    expect(await aptix.documentsIn(workspaceIdOf(second.dir))).toBe(2);
  });

  it("defaults to the root of the git repository holding the current directory, yours and below $HOME", async () => {
    const repository = await makeRepository("repo-root", { "README.md": "# Root\n", "src/deep/a.ts": "a\n" });
    const home = { HOME: repository.parent };
    const indexed = await run(["index", "--json"], join(repository.dir, "src/deep"), home);
    expect(indexed.code, indexed.stderr).toBe(0);
    expect(indexed.json()).toMatchObject({ workspaceId: workspaceIdOf(repository.dir), files: 2 });

    // A turn from the subfolder works in the repository's root: its tools see README.md.
    aptix.openai.script(
      step.functionCalls({
        name: "read_file",
        arguments: { path: "README.md", startLine: null, endLine: null },
        callId: "call_root",
      }),
      step.text("Read."),
    );
    const answered = await run(["run", "Read the README", "--json"], join(repository.dir, "src"), home);
    expect(answered.code, answered.stderr).toBe(0);
    expect(aptix.toolOutputs().get("call_root")).toContain("# Root");
    expect(indexed.stderr + answered.stderr).not.toContain("is not the workspace");
  });

  it("keeps to the current directory when the repository above it lies outside $HOME, and says so", async () => {
    const repository = await makeRepository("repo-away", { "README.md": "# Root\n", "src/deep/a.ts": "a\n" });
    const deep = join(repository.dir, "src/deep");
    const indexed = await run(["index", "--json"], deep, { HOME: repository.outside });
    expect(indexed.code, indexed.stderr).toBe(0);
    expect(indexed.json()).toMatchObject({ workspaceId: workspaceIdOf(deep), files: 1 });
    expect(indexed.stderr).toContain(
      `aptix: the git repository at ${await realpath(repository.dir)} is not the workspace (it lies neither below your home directory nor in the current directory): the workspace is the current directory, ${deep}.`,
    );
    // From the repository's root itself, it is the workspace: the user chose that folder.
    const fromRoot = await run(["index", "--json"], repository.dir, { HOME: repository.outside });
    expect(fromRoot.json()).toMatchObject({ workspaceId: workspaceIdOf(repository.dir), files: 2 });
    expect(fromRoot.stderr).not.toContain("is not the workspace");
  });

  // Giving a folder to another user takes root.
  it.runIf(process.getuid?.() === 0)(
    "keeps to the current directory when another user planted the .git above it, and the tools see only that folder",
    async () => {
      const shared = await makeWorkspace("shared-tmp", {
        "README.md": "# Planted\n",
        "mine/todo.md": "- x\n",
      });
      await mkdir(join(shared.dir, ".git"));
      await chown(join(shared.dir, ".git"), 65534, 65534);
      const mine = join(shared.dir, "mine");
      aptix.openai.script(
        step.functionCalls([
          { name: "list_files", arguments: { path: null, glob: null }, callId: "call_list" },
          {
            name: "read_file",
            arguments: { path: "README.md", startLine: null, endLine: null },
            callId: "call_planted",
          },
        ]),
        step.text("Listed."),
      );
      const result = await run(["run", "List", "--json"], mine, { HOME: shared.parent });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(
        `is not the workspace (it belongs to another user): the workspace is the current directory, ${mine}.`,
      );
      expect(JSON.parse(aptix.toolOutputs().get("call_list") ?? "")).toEqual({
        files: ["todo.md"],
        truncated: false,
      });
      expect(aptix.toolOutputs().get("call_planted")).toContain("README.md does not exist.");
    },
  );

  it("index on a subfolder of a repository honours the .gitignore files above it, from the repository's root down", async () => {
    const repository = await makeRepository("mono", {
      ".gitignore": "dist/\n/packages/app/secret.txt\n*.log\n",
      "packages/.gitignore": "generated/\n",
      "packages/app/.gitignore": "local.md\n",
      "packages/app/src/a.ts": "export const a = 1;\n",
      "packages/app/dist/a.js": "built\n",
      "packages/app/generated/types.ts": "generated\n",
      "packages/app/secret.txt": "secret\n",
      "packages/app/debug.log": "log\n",
      "packages/app/local.md": "local\n",
      "packages/app/notes.md": "# Notes\n",
    });
    const app = join(repository.dir, "packages/app");
    const indexed = await run(["index", app, "--json"], repository.dir);
    expect(indexed.code, indexed.stderr).toBe(0);
    expect(indexed.json()).toMatchObject({ workspaceId: workspaceIdOf(app), files: 3 });
    // The tools see the workspace as the index does: what the repository's .gitignore files ignore is closed.
    aptix.openai.script(
      step.functionCalls([
        { name: "list_files", arguments: { path: null, glob: null }, callId: "call_list" },
        {
          name: "read_file",
          arguments: { path: "dist/a.js", startLine: null, endLine: null },
          callId: "call_dist",
        },
      ]),
      step.text("Listed."),
    );
    const listed = await run(["run", "List", "--workspace", app], repository.dir);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(aptix.toolOutputs().get("call_list") ?? "").files).toEqual([
      ".gitignore",
      "notes.md",
      "src/a.ts",
    ]);
    expect(aptix.toolOutputs().get("call_dist")).toContain("is ignored by .gitignore");
  });
});

describe("aptix: a workspace never indexed", () => {
  it("says the turn ran without the workspace's files and names aptix index as the fix; once indexed, says nothing", async () => {
    const workspace = await makeWorkspace("never-indexed", { "a.md": "# A\n" });
    aptix.openai.script(step.text("Without context."), step.text("With context."));
    const first = await run(["run", "Hello", "--json"], workspace.dir);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(
      `warning WORKSPACE_NOT_FOUND: Workspace "${workspaceIdOf(workspace.dir)}" is not indexed for you`,
    );
    expect(first.stderr).toContain("To index it, run: aptix index\n");
    // stdout still holds the JSON answer alone.
    expect(first.stdout.trim().split("\n")).toHaveLength(1);
    expect(first.json()).toMatchObject({ primaryOutputText: "Without context." });

    expect((await run(["index"], workspace.dir)).code).toBe(0);
    const second = await run(["run", "Hello again"], workspace.dir);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("With context.");
    expect(second.stdout + second.stderr).not.toContain("WORKSPACE_NOT_FOUND");
  });

  it("names the folder in the command when --workspace named it", async () => {
    const workspace = await makeWorkspace("named-elsewhere", { "a.md": "# A\n" });
    aptix.openai.script(step.text("Without context."));
    const result = await run(["run", "Hello", "--workspace", workspace.dir], workspace.parent);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`To index it, run: aptix index ${JSON.stringify(workspace.dir)}\n`);
    // stdout holds the answer alone, for `aptix run … > answer.md`.
    expect(result.stdout).toBe("Without context.\n");
  });

  it("names the command as the user runs it: `pnpm aptix index` from a checkout's dev entry", async () => {
    const workspace = await makeWorkspace("dev-entry", { "a.md": "# A\n" });
    aptix.openai.script(step.text("Without context."));
    // What bin/aptix-dev.ts (`pnpm aptix`) sets before it starts the CLI.
    const result = await run(["run", "Hello"], workspace.dir, { APTIX_CLI_COMMAND: "pnpm aptix" });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("To index it, run: pnpm aptix index\n");
  });
});
