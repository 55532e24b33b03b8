import { chown, realpath } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultWorkspace } from "../src/workspace/default-workspace.js";
import { makeWorkspace, removeWorkspaces } from "./support/workspace-dir.js";

afterAll(removeWorkspaces);

/** Another user's uid: `nobody`'s. */
const OTHER_UID = 65534;
const uid = process.getuid?.();

/** A repository (a `.git` folder) named `repo` with a folder `src/deep` in it, and the folders around it. */
async function repository() {
  const workspace = await makeWorkspace("repo", {
    ".git/HEAD": "ref: refs/heads/main\n",
    "src/deep/a.ts": "a\n",
  });
  const repo = await realpath(workspace.dir);
  return { parent: await realpath(workspace.parent), repo, deep: join(repo, "src/deep") };
}

describe("defaultWorkspace: the git root, when the current user may be taken to have made it", () => {
  it("takes the root of a repository the user owns below $HOME", async () => {
    const { parent, repo, deep } = await repository();
    expect(defaultWorkspace({ cwd: deep, home: parent, uid })).toEqual({ directory: repo });
  });

  it("takes a repository that is the current directory, wherever it is", async () => {
    const { repo } = await repository();
    expect(defaultWorkspace({ cwd: repo, home: undefined, uid })).toEqual({ directory: repo });
  });

  it("keeps to the current directory outside a repository", async () => {
    const workspace = await makeWorkspace("plain", { "a.ts": "a\n" });
    expect(defaultWorkspace({ cwd: workspace.dir, home: workspace.parent, uid })).toEqual({
      directory: workspace.dir,
    });
  });

  it.each([
    ["no $HOME", () => undefined],
    ["$HOME elsewhere", () => "/nonexistent-home"],
  ])(
    "keeps to the current directory when the repository is above it and not below $HOME (%s)",
    async (_name, home) => {
      const { repo, deep } = await repository();
      expect(defaultWorkspace({ cwd: deep, home: home(), uid })).toEqual({
        directory: deep,
        passedOver: {
          repository: repo,
          why: "it lies neither below your home directory nor in the current directory",
        },
      });
    },
  );

  it("keeps to the current directory when the repository is $HOME itself (its .ssh would be in reach)", async () => {
    const { repo, deep } = await repository();
    expect(defaultWorkspace({ cwd: deep, home: repo, uid }).directory).toBe(deep);
  });

  it("keeps to the current directory when the repository belongs to another user", async () => {
    const { repo, deep, parent } = await repository();
    expect(defaultWorkspace({ cwd: deep, home: parent, uid: (uid ?? 0) + 1 })).toEqual({
      directory: deep,
      passedOver: { repository: repo, why: "it belongs to another user" },
    });
  });

  // Changing a folder's owner takes root.
  it.runIf(uid === 0)(
    "keeps to the current directory when another user owns the repository's .git, or its root",
    async () => {
      const planted = await repository();
      await chown(join(planted.repo, ".git"), OTHER_UID, OTHER_UID);
      expect(defaultWorkspace({ cwd: planted.deep, home: planted.parent, uid })).toEqual({
        directory: planted.deep,
        passedOver: { repository: planted.repo, why: "it belongs to another user" },
      });
      const foreignRoot = await repository();
      await chown(foreignRoot.repo, OTHER_UID, OTHER_UID);
      expect(defaultWorkspace({ cwd: foreignRoot.deep, home: foreignRoot.parent, uid }).directory).toBe(
        foreignRoot.deep,
      );
    },
  );

  it("judges a repository by where it lies alone where the platform has no uids", async () => {
    const { parent, repo, deep } = await repository();
    expect(defaultWorkspace({ cwd: deep, home: parent, uid: undefined })).toEqual({ directory: repo });
    expect(defaultWorkspace({ cwd: deep, home: undefined, uid: undefined }).directory).toBe(deep);
  });
});
