import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import { type PlannedFileChange, planPatch } from "./planned-patch.js";
import type { TextFiles } from "./text-files.js";
import { applyPatchArguments, parseArguments } from "./tool-arguments.js";
import type { WorkspaceTool } from "./workspace-tool.js";

/** Asks the user whether to apply a patch that applies cleanly (after showing it); `true` to go on. */
export type PatchConfirmation = (patch: string, changes: readonly PlannedFileChange[]) => Promise<boolean>;

/**
 * `apply_patch { patch }`: all or nothing. Every file's new content is worked out first; only when the whole
 * diff applies, and the user agrees, are the files written (and a write that fails undoes the ones before it).
 */
export function applyPatchTool(
  root: WorkspaceRoot,
  confirm: PatchConfirmation,
  files: TextFiles,
): WorkspaceTool {
  return async (args) => {
    const { patch } = parseArguments(applyPatchArguments, "apply_patch", args);
    const changes = await planPatch(root, patch, files);
    if (!(await confirm(patch, changes)))
      throw new Error("The user declined the patch: no file was changed.");
    const written: PlannedFileChange[] = [];
    try {
      for (const change of changes) {
        await files.write(change, change.after, change.before !== null);
        written.push(change);
      }
    } catch (error) {
      for (const change of written.reverse()) await files.write(change, change.before, change.after !== null);
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
