import { afterAll, describe, expect, it } from "vitest";
import { diskTextFiles } from "../src/tools/disk-text-files.js";
import { planPatch } from "../src/tools/planned-patch.js";
import { WorkspaceRoot } from "../src/workspace/workspace-root.js";
import { makeWorkspace, removeWorkspaces } from "./support/workspace-dir.js";

afterAll(removeWorkspaces);

const hunk = (from: string, to: string) => ["@@ -1 +1 @@", `-${from}`, `+${to}`];
const diff = (...lines: string[]) => `${lines.join("\n")}\n`;

async function plan(files: Record<string, string>, patch: string) {
  const workspace = await makeWorkspace("plan", files);
  return planPatch(await WorkspaceRoot.open(workspace.dir, { allowIgnored: false }), patch, diskTextFiles);
}

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
