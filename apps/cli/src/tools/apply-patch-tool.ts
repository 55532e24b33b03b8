import { constants, mkdir, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import { NO_FOLLOW, type PlannedFileChange, planPatch } from "./planned-patch.js";
import { applyPatchArguments, parseArguments } from "./tool-arguments.js";
import type { WorkspaceTool } from "./workspace-tool.js";

/** Asks the user whether to apply a patch that applies cleanly (after showing it); `true` to go on. */
export type PatchConfirmation = (patch: string, changes: readonly PlannedFileChange[]) => Promise<boolean>;

/**
 * `apply_patch { patch }`: all or nothing. Every file's new content is worked out first; only when the whole
 * diff applies, and the user agrees, are the files written (and a write that fails undoes the ones before it).
 */
export function applyPatchTool(root: WorkspaceRoot, confirm: PatchConfirmation): WorkspaceTool {
  return async (args) => {
    const { patch } = parseArguments(applyPatchArguments, "apply_patch", args);
    const changes = await planPatch(root, patch);
    if (!(await confirm(patch, changes)))
      throw new Error("The user declined the patch: no file was changed.");
    const written: PlannedFileChange[] = [];
    try {
      for (const change of changes) {
        await writeContent(change.absolutePath, change.after, change.before !== null);
        written.push(change);
      }
    } catch (error) {
      for (const change of written.reverse())
        await writeContent(change.absolutePath, change.before, change.after !== null);
      throw new Error(`Writing the patch failed, so no file was changed: ${(error as Error).message}`);
    }
    return {
      applied: true,
      files: changes.map((change) => ({
        path: change.path,
        change: change.before === null ? "created" : change.after === null ? "deleted" : "modified",
      })),
    };
  };
}

/**
 * Writes `content` (`null`: removes the file). A new file is created exclusively and an existing one opened
 * without following a symlink, so a link put there after the plan fails the write instead of being followed.
 */
async function writeContent(path: string, content: string | null, exists: boolean): Promise<void> {
  if (content === null) {
    await rm(path, { force: true });
    return;
  }
  await mkdir(dirname(path), { recursive: true });
  const flag = exists
    ? constants.O_WRONLY | constants.O_TRUNC | NO_FOLLOW
    : constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
  await writeFile(path, content, { encoding: "utf8", flag });
}
