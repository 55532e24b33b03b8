import { describe, expect, it } from "vitest";
import { comparableName } from "../src/workspace/comparable-name.js";
import { isGitignoreName, isGitName } from "../src/workspace/git-name.js";
import { isProjectHook } from "../src/workspace/project-hooks.js";

describe("comparableName: a name as the file systems compare it", () => {
  it.each([
    [".git", ".git"],
    [".GIT", ".git"],
    [".git. . ", ".git"],
    [".git::$INDEX_ALLOCATION", ".git"],
    [".git:stream:$DATA", ".git"],
    [".g\u200cit", ".git"],
    ["\ufeff.\u200dG\u200eI\u200fT\u202a\u202e\u206a\u206f", ".git"],
    [".VSCode.", ".vscode"],
    ["notes.txt", "notes.txt"],
    // Not ignored by HFS+: a zero-width space and a word joiner are characters of the name.
    [".g\u200bit", ".g\u200bit"],
    [".g\u2060it", ".g\u2060it"],
  ])("%j compares as %j", (name, compared) => {
    expect(comparableName(name)).toBe(compared);
  });
});

describe("isGitName", () => {
  it.each([
    ".git",
    ".Git",
    ".git.",
    ".git ",
    ".git::$INDEX_ALLOCATION",
    ".git:x",
    ".g\u200cit",
    ".gi\ufefft",
    "\u202e.git",
    "git~1",
    "GIT~1",
    "GIT~2",
    "GIT~1::$INDEX_ALLOCATION",
    "a\\.git",
  ])("takes %j for .git", (name) => {
    expect(isGitName(name)).toBe(true);
  });

  it.each([
    ".github",
    ".gitignore",
    "git",
    ".gitx",
    "x.git",
    ".g\u200bit",
    "git~",
    "git~x",
    "gitt~1",
    "git~1a",
  ])("takes %j for another name", (name) => {
    expect(isGitName(name)).toBe(false);
  });
});

describe("isGitignoreName", () => {
  it.each([".gitignore", ".GitIgnore.", ".gitignore::$DATA", ".git\u200cignore", "GITIGN~1", "gi250a~3"])(
    "takes %j for .gitignore",
    (name) => {
      expect(isGitignoreName(name)).toBe(true);
    },
  );

  it.each([".gitignored", "gitignore", ".gitattributes", ".git"])("takes %j for another name", (name) => {
    expect(isGitignoreName(name)).toBe(false);
  });
});

describe("isProjectHook: files that run code when an editor or a tool opens the project", () => {
  it.each([
    ".vscode/tasks.json",
    ".vscode/settings.json",
    "packages/app/.vscode/launch.json",
    ".zed/settings.json",
    ".idea/workspace.xml",
    ".husky/pre-commit",
    ".devcontainer/devcontainer.json",
    ".aptix/settings.json",
    ".github/workflows/ci.yml",
    "sub/.github/workflows/release.yaml",
    ".envrc",
    "services/api/.envrc",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    ".VSCode./tasks.json",
    ".v\u200cscode/tasks.json",
    ".envrc::$DATA",
    ".ENVRC",
    "catalog/aptix.json",
    "Catalog/APTIX.json",
    ".devcontainer.json",
    "shop.code-workspace",
    "tools/Shop.Code-Workspace",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".claude/settings.json",
    "pkg/.claude/hooks/stop.sh",
    ".cursor/mcp.json",
    ".mcp.json",
    "mise.toml",
    ".tool-versions",
    ".MCP.json.",
  ])("%j is one", (path) => {
    expect(isProjectHook(path, ["catalog/aptix.json"])).toBe(true);
  });

  it.each([
    "src/app.ts",
    ".github/CODEOWNERS",
    ".github/ISSUE_TEMPLATE/bug.md",
    "workflows/ci.yml",
    "docs/.envrc.md",
    "vscode/tasks.json",
    "package.json",
    "aptix.json",
    "catalog/other.json",
    "devcontainer.json",
    "docs/code-workspace.md",
    "pre-commit-config.yaml",
    "claude/notes.md",
    "mcp.json",
    "mise.lock",
    "tool-versions.md",
  ])("%j is not one", (path) => {
    expect(isProjectHook(path, ["catalog/aptix.json"])).toBe(false);
  });
});
