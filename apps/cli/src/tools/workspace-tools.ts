import type { ToolHandler } from "@aptix/client";
import { defaultClientTools } from "@aptix/contracts";
import type { Terminal } from "../terminal/terminal.js";
import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import { applyPatchTool, type PatchConfirmation } from "./apply-patch-tool.js";
import { listFilesTool } from "./list-files-tool.js";
import { readFileTool } from "./read-file-tool.js";
import { searchFilesTool } from "./search-files-tool.js";

/**
 * The handlers of exactly the default catalog's client tools (`defaultClientTools`), confined to `root`, each
 * printing one line per call: the tool, its main argument, and how it went.
 */
export function workspaceTools(
  root: WorkspaceRoot,
  terminal: Terminal,
  confirm: PatchConfirmation,
): Record<string, ToolHandler> {
  const handlers: Record<string, ToolHandler> = {
    read_file: readFileTool(root),
    list_files: listFilesTool(root),
    search_files: searchFilesTool(root),
    apply_patch: applyPatchTool(root, confirm),
  };
  const names = defaultClientTools.map((tool) => tool.name);
  const missing = names.filter((name) => !(name in handlers));
  if (missing.length > 0 || Object.keys(handlers).length !== names.length) {
    throw new Error(`The CLI's tools differ from the default catalog's (${names.join(", ")}).`);
  }
  return Object.fromEntries(
    Object.entries(handlers).map(([name, handler]) => [name, reported(name, handler, terminal)]),
  );
}

function reported(name: string, handler: ToolHandler, terminal: Terminal): ToolHandler {
  return async (args, context) => {
    const subject = [args.path, args.query, args.glob].filter((value) => typeof value === "string").join(" ");
    const label = `${terminal.style("dim", "tool")} ${terminal.style("bold", name)}${subject ? ` ${subject}` : ""}`;
    try {
      const value = await handler(args, context);
      terminal.line(`${label} ${terminal.style("green", "✓")}`);
      return value;
    } catch (error) {
      terminal.line(`${label} ${terminal.style("red", `✗ ${(error as Error).message}`)}`);
      throw error;
    }
  };
}
