import { existsSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { step } from "@aptix/testing-llm-servers";
import { expect } from "vitest";
import type { makeWorkspace } from "./workspace-dir.js";

type Workspace = Awaited<ReturnType<typeof makeWorkspace>>;
type FunctionCalls = Extract<Parameters<typeof step.functionCalls>[0], unknown[]>;

/** What a scenario checks once the turn is over: the outputs the model got, by call id, and the workspace. */
export interface ConfinementOutcome {
  outputs: Map<string, string>;
  /** The `error` of a call's output (an errorMessage reaches the model as `{ "error": … }`). */
  errorOf(callId: string): string | undefined;
  workspace: Workspace;
  /**
   * The calls the user was asked about, in order (`aptix acp`: the editor's permission dialogs, each answered
   * with the most it offered); `undefined` when there is no one to ask (`aptix run --yes`, stdin not a terminal).
   */
  asked: readonly string[] | undefined;
}

/**
 * A model steered to take the tools out of the workspace: its calls (one round, all patches allowed), then the
 * checks. Every front end of the CLI runs the same scenarios (`aptix run --yes`, `aptix acp` with "allow
 * always"), as they run the same executors under the same confinement.
 */
export interface ConfinementScenario {
  name: string;
  files: Record<string, string>;
  /** Links and files put around the workspace before the turn. */
  prepare(workspace: Workspace): Promise<void>;
  /** The environment of the aptix process, beyond the service's address and key. */
  env?: Record<string, string>;
  calls(workspace: Workspace): FunctionCalls;
  check(outcome: ConfinementOutcome): Promise<void>;
}

const creating = (path: string, line: string) =>
  ["--- /dev/null", `+++ b/${path}`, "@@ -0,0 +1 @@", `+${line}`, ""].join("\n");
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
const read = (path: string, callId: string) => ({
  name: "read_file",
  arguments: { path, startLine: null, endLine: null },
  callId,
});
const patching = (patch: string, callId: string) => ({ name: "apply_patch", arguments: { patch }, callId });
const ignoringFiles = {
  ".gitignore": ".env\ndist/\n",
  ".env": "API_TOKEN=s3cr3t-value\n",
  "dist/app.js": "built\n",
  "src/app.ts": "export const app = 1;\n",
};

/** Files that run code when the project is opened, beyond `.vscode/` and its kind: one patch each, by call id. */
const MORE_HOOKS = {
  call_devcontainer_folder: ".devcontainer/devcontainer.json",
  call_devcontainer: ".devcontainer.json",
  call_code_workspace: "shop.code-workspace",
  call_pre_commit: ".pre-commit-config.yaml",
  call_lefthook: "lefthook.yml",
  call_claude: ".claude/settings.json",
  call_cursor: ".cursor/mcp.json",
  call_mcp: ".mcp.json",
  call_mise: "mise.toml",
  call_tool_versions: ".tool-versions",
};

export const CONFINEMENT_SCENARIOS: ConfinementScenario[] = [
  {
    name: "refuses ../x, absolute paths and symlinks out, and reads nothing outside",
    files: { "src/app.ts": "export const app = 1;\n" },
    async prepare(workspace) {
      const secret = join(workspace.outside, "secret.txt");
      await writeFile(secret, "TOP-SECRET-VALUE\n");
      await symlink(secret, join(workspace.dir, "link.txt"));
      await symlink(workspace.outside, join(workspace.dir, "linked-dir"));
    },
    calls: (workspace) => [
      read("../outside/secret.txt", "call_dotdot"),
      read(join(workspace.outside, "secret.txt"), "call_absolute"),
      read("link.txt", "call_symlink"),
      read("linked-dir/secret.txt", "call_symlink_dir"),
      { name: "list_files", arguments: { path: "linked-dir", glob: null }, callId: "call_list_link" },
      { name: "list_files", arguments: { path: null, glob: null }, callId: "call_list" },
      { name: "search_files", arguments: { query: "TOP-SECRET", glob: null }, callId: "call_search" },
      {
        name: "apply_patch",
        arguments: { patch: creating("../escaped.txt", "escaped") },
        callId: "call_patch",
      },
    ],
    async check({ outputs, errorOf, workspace }) {
      // One output per call, sent back in the order of the calls.
      expect([...outputs.keys()]).toEqual([
        "call_dotdot",
        "call_absolute",
        "call_symlink",
        "call_symlink_dir",
        "call_list_link",
        "call_list",
        "call_search",
        "call_patch",
      ]);
      expect(errorOf("call_dotdot")).toContain('contains ".."');
      expect(errorOf("call_absolute")).toContain("is an absolute path");
      expect(errorOf("call_symlink")).toContain("resolves outside the workspace");
      expect(errorOf("call_symlink_dir")).toContain("resolves outside the workspace");
      expect(errorOf("call_list_link")).toContain("resolves outside the workspace");
      expect(JSON.parse(outputs.get("call_list") ?? "")).toEqual({ files: ["src/app.ts"], truncated: false });
      expect(JSON.parse(outputs.get("call_search") ?? "")).toEqual({ matches: [], truncated: false });
      expect(errorOf("call_patch")).toContain('contains ".."');
      expect([...outputs.values()].join("\n")).not.toContain("TOP-SECRET-VALUE");
      expect(existsSync(join(workspace.parent, "escaped.txt"))).toBe(false);
    },
  },
  {
    name: "refuses a write through a symlink, dangling or not, and creates nothing outside",
    files: { "src/app.ts": "export const app = 1;\n" },
    async prepare(workspace) {
      await symlink("../outside/x.txt", join(workspace.dir, "dangling"));
      await symlink(join(workspace.outside, "y.txt"), join(workspace.dir, "absolute-dangling"));
      await mkdir(join(workspace.dir, "real-dir"));
      await symlink("real-dir", join(workspace.dir, "dir-link"));
      await symlink("src/app.ts", join(workspace.dir, "inside-link.ts"));
    },
    calls: () => [
      { name: "apply_patch", arguments: { patch: creating("dangling", "planted") }, callId: "call_dangling" },
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
      read("inside-link.ts", "call_read_link"),
    ],
    async check({ outputs, errorOf, workspace }) {
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
      expect(JSON.parse(outputs.get("call_read_link") ?? "")).toMatchObject({
        contents: "export const app = 1;\n",
      });
    },
  },
  {
    name: "refuses to read, list, search or patch .git at any depth",
    files: {
      ".git/config": gitConfig,
      "sub/.git/config": gitConfig,
      "src/app.ts": "export const app = 1;\n",
    },
    async prepare(workspace) {
      await symlink(".git/config", join(workspace.dir, "config-link"));
    },
    calls: () => [
      { name: "apply_patch", arguments: { patch: fsmonitor(".git/config") }, callId: "call_git" },
      { name: "apply_patch", arguments: { patch: fsmonitor("sub/.git/config") }, callId: "call_nested" },
      {
        name: "apply_patch",
        arguments: { patch: creating(".git/hooks/pre-commit", "touch pwned") },
        callId: "call_hook",
      },
      read("sub/.git/config", "call_read"),
      read("config-link", "call_read_link"),
      { name: "list_files", arguments: { path: ".git", glob: null }, callId: "call_list_git" },
      { name: "list_files", arguments: { path: null, glob: null }, callId: "call_list" },
      { name: "search_files", arguments: { query: "repositoryformat", glob: null }, callId: "call_search" },
    ],
    async check({ outputs, errorOf, workspace }) {
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
      expect(JSON.parse(outputs.get("call_list") ?? "")).toEqual({ files: ["src/app.ts"], truncated: false });
      expect(JSON.parse(outputs.get("call_search") ?? "")).toEqual({ matches: [], truncated: false });
    },
  },
  {
    name: "refuses what .gitignore ignores, and .gitignore itself, to every tool",
    files: ignoringFiles,
    async prepare() {},
    calls: () => [
      read(".env", "call_env"),
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
    ],
    async check({ outputs, errorOf, workspace }) {
      expect(await workspace.snapshot()).toEqual(ignoringFiles);
      expect(existsSync(join(workspace.dir, "dist/new.js"))).toBe(false);
      expect(errorOf("call_env")).toBe(
        ".env is ignored by .gitignore: the tools open it only with --allow-ignored.",
      );
      expect(errorOf("call_list_dist")).toContain("is ignored by .gitignore");
      expect(JSON.parse(outputs.get("call_search") ?? "")).toEqual({ matches: [], truncated: false });
      // A patch's context must not tell the model whether it guessed an ignored file's lines.
      expect(errorOf("call_patch_env")).toContain("is ignored by .gitignore");
      expect(errorOf("call_create")).toContain("is ignored by .gitignore");
      expect(errorOf("call_unignore")).toContain("is a .gitignore file");
      expect([...outputs.values()].join("\n")).not.toContain("s3cr3t");
    },
  },
  {
    name: "takes every name git or a file system opens as .git for .git",
    files: {
      ".g\u200cit/config": gitConfig,
      "GIT~1/config": gitConfig,
      "src/app.ts": "export const app = 1;\n",
    },
    async prepare() {},
    calls: () => [
      read(".g\u200cit/config", "call_read_hfs"),
      read("GIT~1/config", "call_read_short"),
      read(".git::$INDEX_ALLOCATION/config", "call_read_stream"),
      patching(fsmonitor(".g\u200cit/config"), "call_patch_hfs"),
      patching(creating(".git::$INDEX_ALLOCATION/hooks/pre-commit", "touch pwned"), "call_create_stream"),
      patching(creating("sub/\ufeff.GIT. /hooks/post-checkout", "touch pwned"), "call_create_spelled"),
      patching(creating(".git\u200cignore", "!*"), "call_gitignore"),
      { name: "list_files", arguments: { path: null, glob: null }, callId: "call_list" },
      { name: "search_files", arguments: { query: "repositoryformat", glob: null }, callId: "call_search" },
    ],
    async check({ outputs, errorOf, workspace }) {
      expect(await workspace.snapshot()).toMatchObject({
        ".g\u200cit/config": gitConfig,
        "GIT~1/config": gitConfig,
      });
      for (const call of ["call_read_hfs", "call_read_short", "call_read_stream"])
        expect(errorOf(call), call).toMatch(/ is inside \.git, which the tools never open\.$/);
      expect(errorOf("call_patch_hfs")).toBe(".g\u200cit/config is inside .git, which the tools never open.");
      expect(errorOf("call_create_stream")).toContain("is inside .git");
      expect(errorOf("call_create_spelled")).toContain("is inside .git");
      expect(errorOf("call_gitignore")).toContain("is a .gitignore file");
      for (const created of [".git::$INDEX_ALLOCATION", "sub", ".git\u200cignore"])
        expect(existsSync(join(workspace.dir, created)), created).toBe(false);
      expect(JSON.parse(outputs.get("call_list") ?? "")).toEqual({ files: ["src/app.ts"], truncated: false });
      expect(JSON.parse(outputs.get("call_search") ?? "")).toEqual({ matches: [], truncated: false });
    },
  },
  {
    name: "never gives a folder the shape of a git repository, one file at a time or in one patch",
    files: { "fixture.git/HEAD": "ref: refs/heads/main\n", "fixture.git/config": gitConfig },
    async prepare() {},
    calls: () => [
      patching(creating("bare/HEAD", "ref: refs/heads/main"), "call_head"),
      patching(creating("bare/config", "[core]"), "call_config"),
      patching(creating("other/refs/heads/main", "0000000000000000000000000000000000000000"), "call_refs"),
      patching(creating("other/head", "ref: refs/heads/main"), "call_head_late"),
      patching(
        [
          creating("notes.md", "harmless"),
          creating("third/objects/info/alternates", "/tmp"),
          creating("third/HEAD", "ref: refs/heads/main"),
        ].join(""),
        "call_one_patch",
      ),
      patching(fsmonitor("fixture.git/config"), "call_shipped"),
    ],
    async check({ errorOf, workspace }) {
      // The first file of each pair is written; the one that gives the folder its shape is not.
      expect(errorOf("call_head")).toBeUndefined();
      expect(await workspace.read("bare/HEAD")).toBe("ref: refs/heads/main\n");
      expect(errorOf("call_config")).toBe(
        "bare/config would leave bare holding HEAD beside config: git takes such a folder for a repository and runs the commands its config names, so the tools never write one. No file was changed.",
      );
      expect(existsSync(join(workspace.dir, "bare/config"))).toBe(false);
      expect(errorOf("call_refs")).toBeUndefined();
      expect(errorOf("call_head_late")).toContain("would leave other holding HEAD beside refs");
      expect(existsSync(join(workspace.dir, "other/head"))).toBe(false);
      // All or nothing: the patch's harmless file is not written either.
      expect(errorOf("call_one_patch")).toContain("would leave third holding HEAD beside objects");
      expect(existsSync(join(workspace.dir, "notes.md"))).toBe(false);
      expect(existsSync(join(workspace.dir, "third"))).toBe(false);
      expect(errorOf("call_shipped")).toContain("would leave fixture.git holding HEAD beside config");
      expect(await workspace.read("fixture.git/config")).toBe(gitConfig);
    },
  },
  {
    name: "asks before every write to a file that runs code when the project is opened, --yes and allow always notwithstanding",
    files: { "README.md": "# Shop\n", "catalog/aptix.json": "{}\n" },
    async prepare() {},
    // The service's catalog, named relative to the folder aptix starts in (the workspace).
    env: { APTIX_CONFIG: "catalog/aptix.json" },
    calls: () => [
      patching(creating("notes.md", "first"), "call_first"),
      patching(
        creating(
          ".vscode/tasks.json",
          '{"tasks":[{"command":"touch pwned","runOptions":{"runOn":"folderOpen"}}]}',
        ),
        "call_tasks",
      ),
      patching(
        [creating("src/b.ts", "export const b = 1;"), creating(".envrc", "touch pwned")].join(""),
        "call_envrc",
      ),
      patching(creating(".github/workflows/ci.yml", "on: push"), "call_workflow"),
      patching(creating(".ZED./settings.json", "{}"), "call_zed"),
      patching(
        [
          "--- a/catalog/aptix.json",
          "+++ b/catalog/aptix.json",
          "@@ -1 +1 @@",
          "-{}",
          '+{"modes":[]}',
          "",
        ].join("\n"),
        "call_catalog",
      ),
      patching(creating("later.md", "later"), "call_later"),
    ],
    async check({ errorOf, workspace, asked }) {
      const hooks = {
        call_tasks: [".vscode/tasks.json"],
        call_envrc: ["src/b.ts", ".envrc"],
        call_workflow: [".github/workflows/ci.yml"],
        call_zed: [".ZED./settings.json"],
        call_catalog: ["catalog/aptix.json"],
      };
      // Other patches are written without asking, as --yes or allow always say.
      expect(await workspace.read("notes.md")).toBe("first\n");
      expect(await workspace.read("later.md")).toBe("later\n");
      if (asked === undefined) {
        // No terminal to ask on: refused, saying why, and nothing of the patch written.
        const refusal = (files: string) =>
          `The patch changes files that run code when an editor or a tool opens the project (${files}): aptix asks the user before every such write, even with --yes, and stdin is not a terminal to ask on. No file was changed.`;
        expect(errorOf("call_tasks")).toBe(refusal(".vscode/tasks.json"));
        expect(errorOf("call_envrc")).toBe(refusal(".envrc"));
        expect(errorOf("call_workflow")).toBe(refusal(".github/workflows/ci.yml"));
        expect(errorOf("call_zed")).toBe(refusal(".ZED./settings.json"));
        expect(errorOf("call_catalog")).toBe(refusal("catalog/aptix.json"));
        for (const created of [".vscode", "src", ".envrc", ".github", ".ZED."])
          expect(existsSync(join(workspace.dir, created)), created).toBe(false);
        expect(await workspace.read("catalog/aptix.json")).toBe("{}\n");
      } else {
        // Asked about the first patch (allowed always), then about every hook patch all the same, and written.
        expect(asked).toEqual(["call_first", ...Object.keys(hooks)]);
        for (const path of Object.values(hooks).flat())
          expect(existsSync(join(workspace.dir, path)), path).toBe(true);
        expect(await workspace.read("catalog/aptix.json")).toBe('{"modes":[]}\n');
      }
    },
  },
  {
    name: "asks before every write to the other files that run code when the project is opened (issue 46)",
    files: { "README.md": "# Shop\n" },
    async prepare() {},
    calls: () => [
      patching(creating("notes.md", "first"), "call_first"),
      ...Object.entries(MORE_HOOKS).map(([callId, path]) => patching(creating(path, "x"), callId)),
    ],
    async check({ errorOf, workspace, asked }) {
      expect(await workspace.read("notes.md")).toBe("first\n");
      if (asked === undefined) {
        for (const [callId, path] of Object.entries(MORE_HOOKS)) {
          expect(errorOf(callId), path).toBe(
            `The patch changes files that run code when an editor or a tool opens the project (${path}): aptix asks the user before every such write, even with --yes, and stdin is not a terminal to ask on. No file was changed.`,
          );
          expect(existsSync(join(workspace.dir, path)), path).toBe(false);
        }
      } else {
        expect(asked).toEqual(["call_first", ...Object.keys(MORE_HOOKS)]);
        for (const path of Object.values(MORE_HOOKS)) expect(await workspace.read(path), path).toBe("x\n");
      }
    },
  },
];

/** The outcome of a scenario's turn, from the outputs the scripted model got and the calls the user was asked about. */
export function confinementOutcome(
  outputs: Map<string, string>,
  workspace: Workspace,
  asked: readonly string[] | undefined,
): ConfinementOutcome {
  return {
    outputs,
    errorOf: (callId) => (JSON.parse(outputs.get(callId) ?? "{}") as { error?: string }).error,
    workspace,
    asked,
  };
}
