import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { comparableName } from "../workspace/comparable-name.js";

/** The names that make a folder git's own directory beside `HEAD`: git opens it as a (bare) repository. */
const BESIDE_HEAD = ["config", "objects", "refs"];

/** A file a patch writes (`after` its new text) or deletes (`after: null`); `path` workspace-relative. */
interface Written {
  path: string;
  after: string | null;
}

/**
 * Refuses a patch that would leave a folder it writes in (or below) with the shape of a git repository's own
 * directory: `HEAD` beside `config`, `objects/` or `refs/`, as the file systems compare names. Git takes such a
 * folder for a repository when a command runs in it, and runs what its config names (`core.fsmonitor`,
 * hooks), so a model building one file at a time, over several calls, gets no further than the second file; a
 * folder shipped in that shape is closed to writes, as `.git` is. Throws an Error naming the folder.
 */
export async function refuseRepositoryShape(rootPath: string, written: readonly Written[]): Promise<void> {
  // Per folder the patch writes in or below ("" the root): the names it adds there, and the files it deletes.
  const folders = new Map<string, { added: Set<string>; deleted: Set<string>; path: string }>();
  for (const { path, after } of written) {
    const names = path.split("/");
    for (const [depth, name] of names.entries()) {
      const folder = names.slice(0, depth).join("/");
      const entry = folders.get(folder) ?? { added: new Set(), deleted: new Set(), path };
      const deletes = depth === names.length - 1 && after === null;
      (deletes ? entry.deleted : entry.added).add(comparableName(name));
      folders.set(folder, entry);
    }
  }
  for (const [folder, { added, deleted, path }] of folders) {
    const existing = await readdir(join(rootPath, folder)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [];
      throw error;
    });
    const after = new Set([...existing.map(comparableName), ...added]);
    for (const name of deleted) after.delete(name);
    const beside = BESIDE_HEAD.filter((name) => after.has(name));
    if (after.has("head") && beside.length > 0) {
      throw new Error(
        `${path} would leave ${folder === "" ? "the workspace's root" : folder} holding HEAD beside ${beside.join(", ")}: git takes such a folder for a repository and runs the commands its config names, so the tools never write one. No file was changed.`,
      );
    }
  }
}
