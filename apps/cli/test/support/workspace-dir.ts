import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";

const made: string[] = [];

/** Removes every directory `makeWorkspace` made (call it in `afterAll`). */
export async function removeWorkspaces(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/**
 * A temporary directory holding a workspace folder named `name` (its workspaceId) and an `outside` folder beside
 * it, for files the tools must never reach.
 */
export async function makeWorkspace(name: string, files: Record<string, string>) {
  const parent = await mkdtemp(join(tmpdir(), "aptix-cli-"));
  made.push(parent);
  const dir = join(parent, name);
  const outside = join(parent, "outside");
  await mkdir(outside, { recursive: true });
  await writeFiles(dir, files);
  return {
    parent,
    dir,
    outside,
    read: (path: string) => readFile(join(dir, path), "utf8"),
    /** Every file's content, by path, for "nothing changed" checks. */
    snapshot: async () =>
      Object.fromEntries(
        await Promise.all(
          Object.keys(files).map(async (path) => [path, await readFile(join(dir, path), "utf8")]),
        ),
      ),
  };
}

export async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, contents] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), contents);
  }
}

/** The id the CLI gives the folder `dir` (apps/cli/README.md, `--workspace`; its name needs no replacing): its name, `-`, 8 hex digits of its real path's sha256. */
export function workspaceIdOf(dir: string): string {
  const real = realpathSync(dir);
  return `${basename(real)}-${createHash("sha256").update(real).digest("hex").slice(0, 8)}`;
}
