import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import { type PlannedFileChange, planPatch } from "./planned-patch.js";
import type { TextFiles } from "./text-files.js";
import { applyPatchArguments, parseArguments } from "./tool-arguments.js";
import type { Located, WorkspaceTool } from "./workspace-tool.js";

/** A patch that applies cleanly, as the user is asked about it. */
export interface PatchRequest {
  patch: string;
  changes: readonly PlannedFileChange[];
  /**
   * The changed files that run code when an editor or a tool opens the project (`WorkspaceRoot.isProjectHook`):
   * when there are any, the user is asked every time, whatever they allowed before (`--yes`, "allow always").
   */
  projectHooks: readonly string[];
}

/**
 * Asks the user whether to apply a patch (after showing it); `true` to go on. A throw refuses the patch with its
 * message (there is no one to ask).
 */
export type PatchConfirmation = (request: PatchRequest) => Promise<boolean>;

/**
 * `apply_patch { patch }`: all or nothing. Every file's new content is worked out first; only when the whole
 * diff applies, and the user agrees, are the files written (and a write that fails undoes the ones before it).
 * The files are `located` once planned, before the user is asked.
 */
export function applyPatchTool(
  root: WorkspaceRoot,
  confirm: PatchConfirmation,
  files: TextFiles,
  located: Located,
): WorkspaceTool {
  return async (args) => {
    const { patch } = parseArguments(applyPatchArguments, "apply_patch", args);
    const changes = await planPatch(root, patch, files);
    located(changes.map((change) => change.path));
    const projectHooks = changes.map((change) => change.path).filter((path) => root.isProjectHook(path));
    if (!(await confirm({ patch, changes, projectHooks })))
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
