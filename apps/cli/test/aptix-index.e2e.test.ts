import { symlink, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { step } from "@aptix/testing-llm-servers";
import { describe, expect, it } from "vitest";
import { runAptix } from "./support/aptix-process.js";
import { API_KEY } from "./support/aptix-server.js";
import { useAptixServer } from "./support/use-aptix-server.js";
import { makeWorkspace, workspaceIdOf, writeFiles } from "./support/workspace-dir.js";

/**
 * `aptix index` needs the service's workspace routes and turn-time retrieval (docs/knowledge.md): these tests run the
 * binary against them, from the push to the `[CONTEXT]` block the model gets.
 */
const aptix = useAptixServer();

const run = (args: string[], cwd: string) =>
  runAptix([...args, "--url", aptix.server.url], { cwd, env: { APTIX_API_KEY: API_KEY } });

const INVOICE = [
  "export function computeInvoiceTotal(lines: Array<{ price: number; quantity: number }>) {",
  "  return lines.reduce((total, line) => total + line.price * line.quantity, 0);",
  "}",
  "",
].join("\n");

describe("aptix index", () => {
  it("pushes the workspace's text files, honouring .gitignore, and a turn then gets them as [CONTEXT]", async () => {
    const workspace = await makeWorkspace("billing", {
      ".gitignore": "secret.env\nbuild/\n",
      "src/invoice.ts": INVOICE,
      "src/tax.ts": "export const TAX_RATE = 0.2;\n",
      "secret.env": "computeInvoiceTotal=hidden-value\n",
      "build/invoice.js": "function computeInvoiceTotal() { /* built */ }\n",
    });
    await writeFile(join(workspace.dir, "logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    await writeFile(join(workspace.outside, "linked.ts"), "computeInvoiceTotal outside\n");
    await symlink(join(workspace.outside, "linked.ts"), join(workspace.dir, "linked.ts"));

    const indexed = await run(["index", "--json"], workspace.dir);
    expect(indexed.code, indexed.stderr).toBe(0);
    expect(indexed.json()).toMatchObject({
      workspaceId: workspaceIdOf(workspace.dir),
      files: 3,
      upserted: 3,
      unchanged: 0,
      deleted: 0,
      skipped: [{ path: "logo.png", reason: "binary" }],
    });

    aptix.openai.script(step.text("It multiplies price by quantity and sums."));
    const answered = await run(["run", "How does computeInvoiceTotal work?", "--json"], workspace.dir);
    expect(answered.code, answered.stderr).toBe(0);
    const [, context] = aptix.lastUserParts();
    expect(context).toMatch(/^\[CONTEXT\]\n\n=== CHUNK 1 ===\nId: ctx_1\nPath: src\/invoice\.ts\n/);
    expect(context).toContain("computeInvoiceTotal(lines");
    expect(context).not.toContain("hidden-value");
    expect(context).not.toContain("built");
    expect(context).not.toContain("outside");
  });

  it("indexes a directory given as its argument, and a second push removes deleted files", async () => {
    const workspace = await makeWorkspace("parent", {});
    const project = join(workspace.dir, "project");
    await writeFiles(project, { "a.md": "# A\n", "b.md": "# B\n" });
    const first = await run(["index", project, "--json"], workspace.parent);
    expect(first.json()).toMatchObject({ workspaceId: workspaceIdOf(project), files: 2, upserted: 2 });
    await unlink(join(project, "b.md"));
    const second = await run(["index", project, "--json"], workspace.parent);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json()).toMatchObject({ files: 1, upserted: 0, unchanged: 1, deleted: 1 });
    expect(await aptix.documentsIn(workspaceIdOf(project))).toBe(1);
  });

  it("pushes more than 1,000 files in batches of at most 1,000, and rebuilds the index only when files were deleted", async () => {
    const files = Object.fromEntries(
      Array.from({ length: 1001 }, (_, index) => [
        `notes/note-${String(index).padStart(4, "0")}.md`,
        `# Note ${index}\n`,
      ]),
    );
    const workspace = await makeWorkspace("many-notes", files);
    const indexed = await run(["index", "--json"], workspace.dir);
    expect(indexed.code, indexed.stderr).toBe(0);
    expect(indexed.json()).toMatchObject({
      workspaceId: workspaceIdOf(workspace.dir),
      files: 1001,
      upserted: 1001,
      deleted: 0,
    });
    expect(await aptix.documentsIn(workspaceIdOf(workspace.dir))).toBe(1001);

    // Nothing deleted: every batch finds its files unchanged, and nothing is pushed again.
    const again = await run(["index", "--json"], workspace.dir);
    expect(again.json()).toMatchObject({ files: 1001, upserted: 0, unchanged: 1001, deleted: 0 });

    await unlink(join(workspace.dir, "notes/note-0000.md"));
    const afterDelete = await run(["index", "--json"], workspace.dir);
    expect(afterDelete.code, afterDelete.stderr).toBe(0);
    expect(afterDelete.json()).toMatchObject({ files: 1000, upserted: 0, unchanged: 1000, deleted: 1 });
    expect(await aptix.documentsIn(workspaceIdOf(workspace.dir))).toBe(1000);
  });
});
