import { link as hardLink, mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { WorkspaceRoot } from "../src/workspace/workspace-root.js";
import { makeWorkspace, removeWorkspaces } from "./support/workspace-dir.js";

afterAll(removeWorkspaces);

/**
 * A workspace with links of every kind: inside and out, to files and folders, chained, dangling, absolute and
 * relative, into .git and onto ignored files.
 */
async function linkedWorkspace(allowIgnored = false) {
  const workspace = await makeWorkspace("resolver", {
    ".gitignore": ".env\nbuild/\n",
    ".env": "SECRET=1\n",
    "build/out.js": "built\n",
    "src/app.ts": "app\n",
    "src/lib/util.ts": "util\n",
    ".git/config": "[core]\n",
    "sub/.GIT/config": "[core]\n",
  });
  await mkdir(join(workspace.outside, "dir"));
  const link = (target: string, path: string) => symlink(target, join(workspace.dir, path));
  await link("src/app.ts", "app-link.ts");
  await link("app-link.ts", "chain.ts");
  await link("src/lib", "lib-link");
  await link("../outside/secret.txt", "dangling");
  await link("../../outside", "src/up-and-out");
  await link(join(workspace.dir, "src/app.ts"), "absolute-inside.ts");
  await link(join(workspace.outside, "dir"), "absolute-outside");
  await link(".env", "env-link");
  await link(".git", "git-link");
  await link("loop-b", "loop-a");
  await link("loop-a", "loop-b");
  await link("src/lib/../app.ts", "dotdot-inside.ts");
  const root = await WorkspaceRoot.open(workspace.dir, { allowIgnored });
  return { workspace, root };
}

describe("WorkspaceRoot.resolve for reading", () => {
  it("follows links that stay inside, to their real path", async () => {
    const { root } = await linkedWorkspace();
    for (const path of ["app-link.ts", "chain.ts", "absolute-inside.ts", "dotdot-inside.ts", "./src//app.ts"])
      expect((await root.resolve(path, "read")).path, path).toBe("src/app.ts");
    expect((await root.resolve("lib-link/util.ts", "read")).path).toBe("src/lib/util.ts");
    expect((await root.resolve("", "read")).stats?.isDirectory()).toBe(true);
  });

  it.each([
    ["../outside/secret.txt", 'contains ".."'],
    ["src/../../x", 'contains ".."'],
    ["..\\x", 'contains ".."'],
    ["/etc/passwd", "is an absolute path"],
    ["C:\\Windows", "is an absolute path"],
    ["dangling", "resolves outside the workspace"],
    ["src/up-and-out/secret.txt", "resolves outside the workspace"],
    ["absolute-outside", "resolves outside the workspace"],
    ["loop-a", "goes through too many symlinks"],
    ["missing.txt", "does not exist"],
    ["src/app.ts/x", "goes through src/app.ts, which is not a folder"],
    [".git/config", "is inside .git"],
    ["sub/.GIT/config", "is inside .git"],
    ["git-link/config", "is inside .git"],
    [".git::$INDEX_ALLOCATION/config", "is inside .git"],
    [".g\u200cit/config", "is inside .git"],
    ["GIT~1/config", "is inside .git"],
    [".env", "is ignored by .gitignore"],
    ["env-link", "is ignored by .gitignore"],
    ["build/out.js", "is ignored by .gitignore"],
  ])("refuses %j: %s", async (path, why) => {
    const { root } = await linkedWorkspace();
    await expect(root.resolve(path, "read")).rejects.toThrow(why);
  });

  it("opens ignored files with allowIgnored, never .git", async () => {
    const { root } = await linkedWorkspace(true);
    expect((await root.resolve("env-link", "read")).path).toBe(".env");
    expect((await root.resolve("build/out.js", "read")).path).toBe("build/out.js");
    await expect(root.resolve(".git/config", "read")).rejects.toThrow("is inside .git");
  });
});

describe("WorkspaceRoot.resolve for writing", () => {
  it("takes plain paths, existing or to be created, without a link on the way", async () => {
    const { root } = await linkedWorkspace();
    expect(await root.resolve("src/app.ts", "write")).toMatchObject({ path: "src/app.ts" });
    const created = await root.resolve("src/new/deep/file.ts", "write");
    expect(created).toMatchObject({ path: "src/new/deep/file.ts", stats: undefined });
  });

  it.each([
    ["dangling", "is a symlink (dangling)"],
    ["app-link.ts", "is a symlink (app-link.ts)"],
    ["lib-link/util.ts", "goes through a symlink (lib-link)"],
    ["lib-link/new.ts", "goes through a symlink (lib-link)"],
    ["src/up-and-out/x.txt", "goes through a symlink (src/up-and-out)"],
    [".git/hooks/pre-commit", "is inside .git"],
    ["new/.git/config", "is inside .git"],
    ["new/.Git./config", "is inside .git"],
    [".git::$INDEX_ALLOCATION/hooks/pre-commit", "is inside .git"],
    ["new/.g\u200cit/config", "is inside .git"],
    ["new/\ufeff.GIT:stream/config", "is inside .git"],
    ["new/git~1/config", "is inside .git"],
    [".gitignore.", "is a .gitignore file"],
    ["src/.git\u200cignore", "is a .gitignore file"],
    [".env", "is ignored by .gitignore"],
    ["build/new.js", "is ignored by .gitignore"],
    [".gitignore", "is a .gitignore file"],
    ["src/.gitignore", "is a .gitignore file"],
  ])("refuses %j: %s", async (path, why) => {
    const { root } = await linkedWorkspace();
    await expect(root.resolve(path, "write")).rejects.toThrow(why);
  });

  it("refuses a file with another hard link, which may be outside", async () => {
    const { workspace, root } = await linkedWorkspace();
    await writeFile(join(workspace.outside, "shared.txt"), "shared\n");
    await hardLink(join(workspace.outside, "shared.txt"), join(workspace.dir, "hard.txt"));
    await expect(root.resolve("hard.txt", "write")).rejects.toThrow("has 2 hard links");
  });

  it("writes ignored files and .gitignore with allowIgnored, never through a link", async () => {
    const { root } = await linkedWorkspace(true);
    expect((await root.resolve("build/new.js", "write")).path).toBe("build/new.js");
    expect((await root.resolve(".gitignore", "write")).path).toBe(".gitignore");
    await expect(root.resolve("env-link", "write")).rejects.toThrow("is a symlink");
  });
});

describe("WorkspaceRoot in a subfolder of a git repository", () => {
  /** A repository (a `.git` folder at its root) whose workspace is `packages/app`, with .gitignore files above it. */
  async function subfolderWorkspace(allowIgnored: boolean) {
    const repository = await makeWorkspace("repository", {
      ".git/HEAD": "ref: refs/heads/main\n",
      ".gitignore": "dist/\n/packages/app/secret.txt\n",
      "packages/.gitignore": "*.tmp\n",
      "packages/app/dist/out.js": "built\n",
      "packages/app/secret.txt": "secret\n",
      "packages/app/notes.tmp": "scratch\n",
      "packages/app/src/a.ts": "a\n",
    });
    return WorkspaceRoot.open(join(repository.dir, "packages/app"), { allowIgnored });
  }

  it.each([
    ["dist/out.js", "an unanchored rule of the repository's root"],
    ["secret.txt", "a rule anchored at the repository's root"],
    ["notes.tmp", "a rule of a folder between the root and the workspace"],
  ])("closes %j, ignored by %s", async (path) => {
    const root = await subfolderWorkspace(false);
    await expect(root.resolve(path, "read")).rejects.toThrow("is ignored by .gitignore");
    expect((await root.resolve("src/a.ts", "read")).path).toBe("src/a.ts");
  });

  it("opens them with allowIgnored", async () => {
    const root = await subfolderWorkspace(true);
    expect((await root.resolve("dist/out.js", "read")).path).toBe("dist/out.js");
  });
});

describe("WorkspaceRoot.isProjectHook", () => {
  it("takes the APTIX_CONFIG file for one when it lies in the workspace, by its real path", async () => {
    const workspace = await makeWorkspace("hooks", { "config/catalog.json": "{}\n", "src/a.ts": "a\n" });
    await symlink("config", join(workspace.dir, "config-link"));
    const root = await WorkspaceRoot.open(workspace.dir, {
      allowIgnored: false,
      configFile: join(workspace.dir, "config-link/catalog.json"),
    });
    expect(root.isProjectHook("config/catalog.json")).toBe(true);
    expect(root.isProjectHook("src/a.ts")).toBe(false);
    expect(root.isProjectHook(".vscode/tasks.json")).toBe(true);
  });

  it("takes a config file that does not exist yet by its folder's real path, and none outside", async () => {
    const workspace = await makeWorkspace("hooks-new", { "src/a.ts": "a\n" });
    const root = await WorkspaceRoot.open(workspace.dir, {
      allowIgnored: false,
      configFile: join(workspace.dir, "src/aptix.json"),
    });
    expect(root.isProjectHook("src/aptix.json")).toBe(true);
    const outside = await WorkspaceRoot.open(workspace.dir, {
      allowIgnored: false,
      configFile: join(workspace.outside, "aptix.json"),
    });
    expect(outside.isProjectHook("aptix.json")).toBe(false);
    expect(outside.isProjectHook("outside/aptix.json")).toBe(false);
  });
});
