import type { ToolHandler } from "@aptix/client";
import { defaultClientTools } from "@aptix/contracts";
import type { Terminal } from "../terminal/terminal.js";
import { Deadline } from "../workspace/deadline.js";
import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import { applyPatchTool, type PatchConfirmation } from "./apply-patch-tool.js";
import { listFilesTool } from "./list-files-tool.js";
import { readFileTool } from "./read-file-tool.js";
import { searchFilesTool } from "./search-files-tool.js";
import type { WorkspaceTool } from "./workspace-tool.js";

/**
 * How long one tool call may work before it answers (a walk answers what it found so far): a model's call must
 * not stall the CLI, nor the turn waiting for its result. The user's time to answer a patch prompt is not
 * counted: `apply_patch` does not walk.
 */
const TOOL_BUDGET_MS = 10_000;

/**
 * The handlers of exactly the default catalog's client tools (`defaultClientTools`), confined to `root`, each
 * given `TOOL_BUDGET_MS` and printing one line per call: the tool, its main argument, and how it went.
 */
export function workspaceTools(
  root: WorkspaceRoot,
  terminal: Terminal,
  confirm: PatchConfirmation,
): Record<string, ToolHandler> {
  const tools: Record<string, WorkspaceTool> = {
    read_file: readFileTool(root),
    list_files: listFilesTool(root),
    search_files: searchFilesTool(root),
    apply_patch: applyPatchTool(root, confirm),
  };
  const names = defaultClientTools.map((tool) => tool.name);
  const missing = names.filter((name) => !(name in tools));
  if (missing.length > 0 || Object.keys(tools).length !== names.length) {
    throw new Error(`The CLI's tools differ from the default catalog's (${names.join(", ")}).`);
  }
  return Object.fromEntries(
    Object.entries(tools).map(([name, tool]) => [name, reported(name, tool, terminal)]),
  );
}

function reported(name: string, tool: WorkspaceTool, terminal: Terminal): ToolHandler {
  return async (args) => {
    const subject = [args.path, args.query, args.glob].filter((value) => typeof value === "string").join(" ");
    const label = terminal.compose`${terminal.style("dim", "tool")} ${terminal.style("bold", name)}${subject ? ` ${subject}` : ""}`;
    try {
      const value = await tool(args, new Deadline(TOOL_BUDGET_MS));
      terminal.line(terminal.compose`${label} ${terminal.style("green", "✓")}`);
      return value;
    } catch (error) {
      terminal.line(terminal.compose`${label} ${terminal.style("red", `✗ ${(error as Error).message}`)}`);
      throw error;
    }
  };
}
