import { applyPatch, parsePatch, type StructuredPatch } from "diff";
import type { WorkspacePath, WorkspaceRoot } from "../workspace/workspace-root.js";
import { refuseRepositoryShape } from "./repository-shape.js";
import type { TextFiles } from "./text-files.js";

/** One file a patch changes, with its content before and after (`null`: the file does not exist). */
export interface PlannedFileChange {
  /** Workspace-relative, as `WorkspaceRoot.resolve` gave it (`./a//b` is `a/b`). */
  path: string;
  /** The absolute path to write: no symlink on the way, none there. */
  absolutePath: string;
  before: string | null;
  after: string | null;
}

/**
 * Works out every file a unified diff changes, and their new contents, without writing anything: paths plain
 * or git-style (`a/…`, `b/…`), `/dev/null` for a created or deleted file, several hunks and files, a file
 * patched twice in one diff. The contents before are read from `files` (an editor's buffer, with `aptix acp`).
 * Throws an Error saying what does not apply, or what the patch may not do (`refuseRepositoryShape`); nothing is
 * written either way.
 */
export async function planPatch(
  root: WorkspaceRoot,
  patch: string,
  files: TextFiles,
): Promise<PlannedFileChange[]> {
  let parsed: StructuredPatch[];
  try {
    parsed = parsePatch(patch);
  } catch (error) {
    throw new Error(`The patch is not a unified diff: ${(error as Error).message}`);
  }
  const filePatches = parsed.filter((file) => file.hunks.length > 0 || file.isCreate || file.isDelete);
  if (filePatches.length === 0)
    throw new Error("The patch holds no hunk: send a unified diff with ---/+++ headers and @@ hunks.");
  const changes = new Map<string, PlannedFileChange>();
  for (const file of filePatches) {
    const { oldPath, newPath } = pathsOf(file);
    const path = newPath ?? oldPath;
    if (path === null) throw new Error("A file of the patch names no path (---/+++ headers are missing).");
    if (oldPath !== null && newPath !== null && oldPath !== newPath) {
      throw new Error(
        `Renaming ${oldPath} to ${newPath} is not supported: delete and create the file instead.`,
      );
    }
    const resolved = await root.resolve(path, "write");
    const { absolutePath } = resolved;
    const planned = changes.get(absolutePath) ?? {
      path: resolved.path,
      absolutePath,
      before: await readExisting(resolved, path, files),
      after: null,
    };
    // A file patched again in the same diff is patched on top of its first patch.
    const current = changes.has(absolutePath) ? planned.after : planned.before;
    if (oldPath === null && current !== null)
      throw new Error(`${path} already exists: the patch creates it.`);
    if (oldPath !== null && current === null) throw new Error(`${path} does not exist.`);
    const result = applyPatch(current ?? "", file);
    if (result === false) {
      throw new Error(
        `The patch does not apply to ${path}: its context or removed lines differ from the file.`,
      );
    }
    if (newPath === null && result !== "")
      throw new Error(`The patch deletes ${path} but leaves lines in it.`);
    changes.set(absolutePath, { ...planned, after: newPath === null ? null : result });
  }
  await refuseRepositoryShape(root.path, [...changes.values()]);
  return [...changes.values()];
}

/** The file's paths with git's `a/` and `b/` prefixes taken off; `null` for `/dev/null`. */
function pathsOf(file: StructuredPatch): { oldPath: string | null; newPath: string | null } {
  const oldName = headerPath(file.oldFileName);
  const newName = headerPath(file.newFileName);
  // Git style when every named side carries its prefix (a plain path may itself start with `a/`).
  const gitStyle =
    file.isGit === true ||
    ((oldName === null || oldName.startsWith("a/")) &&
      (newName === null || newName.startsWith("b/")) &&
      (oldName ?? newName) !== null);
  const strip = (name: string | null) => (name !== null && gitStyle ? name.slice(2) : name);
  return { oldPath: strip(oldName), newPath: strip(newName) };
}

function headerPath(name: string | undefined): string | null {
  if (name === undefined || name === "" || name === "/dev/null") return null;
  return name;
}

async function readExisting(file: WorkspacePath, path: string, files: TextFiles): Promise<string | null> {
  const { stats } = file;
  if (stats === undefined) return null;
  if (stats.isDirectory()) throw new Error(`${path} is a directory.`);
  if (!stats.isFile()) throw new Error(`${path} is not a regular file.`);
  // The confined path, not the model's: an editor is asked for the file the root allowed.
  return await files.read({ path: file.path, absolutePath: file.absolutePath });
}
