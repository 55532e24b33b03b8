import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { diskTextFiles } from "../src/tools/disk-text-files.js";
import { planPatch } from "../src/tools/planned-patch.js";
import { WorkspaceRoot } from "../src/workspace/workspace-root.js";
import { makeWorkspace, removeWorkspaces } from "./support/workspace-dir.js";

afterAll(removeWorkspaces);

const hunk = (from: string, to: string) => ["@@ -1 +1 @@", `-${from}`, `+${to}`];
const diff = (...lines: string[]) => `${lines.join("\n")}\n`;

async function plan(files: Record<string, string>, patch: string) {
  const workspace = await makeWorkspace("plan", { "README.md": "plan\n", ...files });
  return planPatch(await WorkspaceRoot.open(workspace.dir, { allowIgnored: false }), patch, diskTextFiles);
}

const creating = (...paths: string[]) =>
  diff(...paths.flatMap((path) => ["--- /dev/null", `+++ b/${path}`, "@@ -0,0 +1 @@", "+x"]));

describe("planPatch: which files a diff changes, and how", () => {
  it("takes plain paths, and a plain path that starts with a/ stays as it is", async () => {
    const changes = await plan(
      { "a/notes.txt": "one\n" },
      diff("--- a/notes.txt", "+++ a/notes.txt", ...hunk("one", "two")),
    );
    expect(changes.map(({ path, before, after }) => ({ path, before, after }))).toEqual([
      { path: "a/notes.txt", before: "one\n", after: "two\n" },
    ]);
  });

  it("strips git's a/ and b/ prefixes", async () => {
    const changes = await plan(
      { "notes.txt": "one\n" },
      diff("--- a/notes.txt", "+++ b/notes.txt", ...hunk("one", "two")),
    );
    expect(changes.map((change) => change.path)).toEqual(["notes.txt"]);
  });

  it("applies two patches of one file on top of each other", async () => {
    const changes = await plan(
      { "n.txt": "one\n" },
      diff(
        "--- a/n.txt",
        "+++ b/n.txt",
        ...hunk("one", "two"),
        "--- a/n.txt",
        "+++ b/n.txt",
        ...hunk("two", "three"),
      ),
    );
    expect(changes.map(({ before, after }) => [before, after])).toEqual([["one\n", "three\n"]]);
  });

  it.each([
    ["a hunk without file headers", diff(...hunk("one", "two")), /names no path/],
    [
      "a rename",
      diff("--- a/n.txt", "+++ b/m.txt", ...hunk("one", "two")),
      /Renaming n\.txt to m\.txt is not supported/,
    ],
    [
      "a change to a missing file",
      diff("--- a/gone.txt", "+++ b/gone.txt", ...hunk("one", "two")),
      /gone\.txt does not exist/,
    ],
    [
      "creating a file that exists",
      diff("--- /dev/null", "+++ b/n.txt", "@@ -0,0 +1 @@", "+new"),
      /n\.txt already exists/,
    ],
    [
      "a deletion that leaves lines",
      diff("--- a/n.txt", "+++ /dev/null", "@@ -1 +0,0 @@", "-other"),
      /does not apply to n\.txt/,
    ],
    ["text that is no diff", "just some words\n", /holds no hunk/],
    ["a malformed hunk", diff("--- a/n.txt", "+++ b/n.txt", "@@ -1,5 +1,5 @@", "-one"), /not a unified diff/],
  ])("refuses %s", async (_name, patch, message) => {
    await expect(plan({ "n.txt": "one\n" }, patch)).rejects.toThrow(message);
  });
});

describe("planPatch: no folder gets the shape of a git repository", () => {
  it.each([
    [
      "HEAD beside an existing config",
      { "bare/config": "[core]\n" },
      creating("bare/HEAD"),
      "bare",
      "config",
    ],
    [
      "config beside an existing HEAD",
      { "bare/HEAD": "ref: refs/heads/main\n" },
      creating("bare/config"),
      "bare",
      "config",
    ],
    [
      "refs/ beside an existing HEAD",
      { "bare/HEAD": "x\n" },
      creating("bare/refs/heads/main"),
      "bare",
      "refs",
    ],
    [
      "objects/ beside an existing HEAD",
      { "bare/HEAD": "x\n" },
      creating("bare/objects/info/x"),
      "bare",
      "objects",
    ],
    ["HEAD and config in one patch", {}, creating("new/config", "new/HEAD"), "new", "config"],
    ["HEAD and refs/ in one patch, deep", {}, creating("a/b/refs/x", "a/b/HEAD"), "a/b", "refs"],
    ["the workspace's root", { config: "x\n" }, creating("HEAD"), "the workspace's root", "config"],
    [
      "names in another case, or with ignorable code points",
      {},
      creating("c/head", "c/Con\u200cfig."),
      "c",
      "config",
    ],
    [
      "a change inside a folder shipped in that shape",
      { "x.git/HEAD": "a\n", "x.git/config": "[core]\n" },
      diff("--- a/x.git/config", "+++ b/x.git/config", ...hunk("[core]", "[core] # x")),
      "x.git",
      "config",
    ],
  ])("refuses %s, naming the folder", async (_name, files, patch, folder, beside) => {
    await expect(plan(files, patch)).rejects.toThrow(
      `would leave ${folder} holding HEAD beside ${beside}: git takes such a folder for a repository`,
    );
  });

  it("refuses the whole patch: its other files are not planned for writing", async () => {
    const workspace = await makeWorkspace("plan-shape", { "src/a.ts": "a\n" });
    const root = await WorkspaceRoot.open(workspace.dir, { allowIgnored: false });
    await expect(
      planPatch(root, creating("src/b.ts", "r/HEAD", "r/objects/x"), diskTextFiles),
    ).rejects.toThrow("holding HEAD beside objects");
    expect(existsSync(join(workspace.dir, "src/b.ts"))).toBe(false);
  });

  it.each([
    ["HEAD alone", {}, creating("bare/HEAD")],
    ["config, objects and refs without HEAD", {}, creating("d/config", "d/objects/x", "d/refs/y")],
    ["HEAD and config in different folders", { "a/config": "x\n" }, creating("b/HEAD")],
    ["a file named like HEAD", { "d/config": "x\n" }, creating("d/HEAD.md", "d/HEADER")],
    [
      "deleting HEAD from a folder of that shape",
      { "x/HEAD": "a\n", "x/config": "b\n" },
      diff("--- a/x/HEAD", "+++ /dev/null", "@@ -1 +0,0 @@", "-a"),
    ],
  ])("plans %s", async (_name, files, patch) => {
    expect((await plan(files, patch)).length).toBeGreaterThan(0);
  });
});
