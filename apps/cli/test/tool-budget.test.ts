import { afterAll, describe, expect, it } from "vitest";
import { listFilesTool } from "../src/tools/list-files-tool.js";
import { searchFilesTool } from "../src/tools/search-files-tool.js";
import { Deadline } from "../src/workspace/deadline.js";
import { WorkspaceRoot } from "../src/workspace/workspace-root.js";
import { makeWorkspace, removeWorkspaces } from "./support/workspace-dir.js";

afterAll(removeWorkspaces);

async function root() {
  const files = Object.fromEntries(
    Array.from({ length: 20 }, (_, index) => [`notes/n${index}.md`, "needle\n"]),
  );
  const workspace = await makeWorkspace("budget", files);
  return WorkspaceRoot.open(workspace.dir, { allowIgnored: false });
}

describe("a tool call's budget", () => {
  it("stops a walk past its deadline and says the answer is partial", async () => {
    const workspace = await root();
    const expired = new Deadline(0);
    expect(await listFilesTool(workspace)({ path: null, glob: null }, expired)).toEqual({
      files: [],
      truncated: true,
      timedOut: true,
    });
    expect(await searchFilesTool(workspace)({ query: "needle", glob: null }, expired)).toEqual({
      matches: [],
      truncated: true,
      timedOut: true,
    });
  });

  it("answers whole within it", async () => {
    const workspace = await root();
    const listed = await listFilesTool(workspace)({ path: "notes", glob: null }, new Deadline(60_000));
    expect(listed).toMatchObject({ truncated: false });
    expect((listed as { files: string[] }).files).toHaveLength(20);
  });
});
