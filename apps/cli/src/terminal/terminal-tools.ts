import type { ToolHandler } from "@aptix/client";
import type { PatchConfirmation } from "../tools/apply-patch-tool.js";
import { diskTextFiles } from "../tools/disk-text-files.js";
import { type BudgetedTool, workspaceTools } from "../tools/workspace-tools.js";
import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import type { Terminal } from "./terminal.js";

/**
 * The workspace's tools as `aptix chat` and `aptix run` run them: on disk, each call printed as one line (the
 * tool, its main argument, and how it went).
 */
export function terminalTools(
  root: WorkspaceRoot,
  terminal: Terminal,
  confirm: PatchConfirmation,
): Record<string, ToolHandler> {
  const tools = workspaceTools(root, { confirm, files: diskTextFiles });
  return Object.fromEntries(
    Object.entries(tools).map(([name, tool]) => [name, reported(name, tool, terminal)]),
  );
}

function reported(name: string, tool: BudgetedTool, terminal: Terminal): ToolHandler {
  return async (args) => {
    const subject = [args.path, args.query, args.glob].filter((value) => typeof value === "string").join(" ");
    const label = terminal.compose`${terminal.style("dim", "tool")} ${terminal.style("bold", name)}${subject ? ` ${subject}` : ""}`;
    try {
      terminal.waiting();
      const value = await tool(args);
      terminal.line(terminal.compose`${label} ${terminal.style("green", "✓")}`);
      // The model is called again with the results.
      terminal.waiting();
      return value;
    } catch (error) {
      terminal.line(terminal.compose`${label} ${terminal.style("red", `✗ ${(error as Error).message}`)}`);
      throw error;
    }
  };
}
