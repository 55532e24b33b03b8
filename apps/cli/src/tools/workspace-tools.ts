import { defaultClientTools } from "@aptix/contracts";
import { Deadline } from "../workspace/deadline.js";
import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import { applyPatchTool, type PatchConfirmation } from "./apply-patch-tool.js";
import { listFilesTool } from "./list-files-tool.js";
import { readFileTool } from "./read-file-tool.js";
import { searchFilesTool } from "./search-files-tool.js";
import type { TextFiles } from "./text-files.js";
import type { Located } from "./workspace-tool.js";

/**
 * How long one tool call may work before it answers (a walk answers what it found so far): a model's call must
 * not stall the CLI, nor the turn waiting for its result. The user's time to answer a patch prompt is not
 * counted: `apply_patch` does not walk.
 */
const TOOL_BUDGET_MS = 10_000;

/** A client tool as a front end runs it: the call's arguments in, its result out (a throw is its errorMessage). */
export type BudgetedTool = (args: Record<string, unknown>) => Promise<unknown>;

export interface WorkspaceToolsOptions {
  /** Asked before a patch that applies is written. */
  confirm: PatchConfirmation;
  /** Where `read_file` and `apply_patch` read and write file text: the disk, or an editor's buffers. */
  files: TextFiles;
  /** Told the confined paths `read_file` and `apply_patch` open (default: no one). */
  located?: Located;
}

/**
 * The executors of exactly the default catalog's client tools (`defaultClientTools`), confined to `root`, each
 * given `TOOL_BUDGET_MS`: one implementation, one confinement, for every front end (`aptix chat` / `run`, which
 * print a line per call, and `aptix acp`, which reports calls to the editor).
 */
export function workspaceTools(
  root: WorkspaceRoot,
  options: WorkspaceToolsOptions,
): Record<string, BudgetedTool> {
  const located = options.located ?? (() => {});
  const tools = {
    read_file: readFileTool(root, options.files, located),
    list_files: listFilesTool(root),
    search_files: searchFilesTool(root),
    apply_patch: applyPatchTool(root, options.confirm, options.files, located),
  };
  const names = defaultClientTools.map((tool) => tool.name);
  const missing = names.filter((name) => !(name in tools));
  if (missing.length > 0 || Object.keys(tools).length !== names.length) {
    throw new Error(`The CLI's tools differ from the default catalog's (${names.join(", ")}).`);
  }
  return Object.fromEntries(
    Object.entries(tools).map(([name, tool]) => [name, (args) => tool(args, new Deadline(TOOL_BUDGET_MS))]),
  );
}
