import { join } from "node:path";
import type { ToolCallContent, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import type { PlannedFileChange } from "../tools/planned-patch.js";

/** How an editor groups and draws a call: reads, searches and edits of the workspace; the service's tools. */
export function toolKindOf(name: string): ToolKind {
  switch (name) {
    case "read_file":
      return "read";
    case "list_files":
    case "search_files":
      return "search";
    case "apply_patch":
      return "edit";
    case "agent_change_mode":
      return "switch_mode";
    default:
      return "other";
  }
}

/** The line an editor shows for a call: the tool and its main argument. */
export function toolTitleOf(name: string, args: Record<string, unknown>): string {
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  switch (name) {
    case "read_file":
      return `Read ${text(args.path) ?? "a file"}`;
    case "list_files":
      return `List ${text(args.path) ?? "the workspace"}${text(args.glob) ? ` (${text(args.glob)})` : ""}`;
    case "search_files":
      return `Search for ${JSON.stringify(text(args.query) ?? "")}${text(args.glob) ? ` in ${text(args.glob)}` : ""}`;
    case "apply_patch":
      return "Apply a patch";
    case "agent_change_mode":
      return `Switch to mode ${text(args.mode) ?? ""}`.trimEnd();
    default:
      return name;
  }
}

/** A workspace-relative path (confined) as the editor knows it: absolute, below the folder it opened. */
export function editorPathOf(editorRoot: string, path: string): string {
  return join(editorRoot, ...path.split("/"));
}

/** The confined paths a call opens as its locations, for an editor that follows along. */
export function locationsOf(paths: readonly string[], editorRoot: string): ToolCallLocation[] {
  return paths.map((path) => ({ path: editorPathOf(editorRoot, path) }));
}

/** A patch's changes as `diff` contents: the editor's diff view, before the user allows it and after. */
export function diffContentsOf(changes: readonly PlannedFileChange[], editorRoot: string): ToolCallContent[] {
  return changes.map((change) => ({
    type: "diff",
    path: editorPathOf(editorRoot, change.path),
    oldText: change.before,
    newText: change.after ?? "",
  }));
}

/** Text shown inside a call's box: a result or an error. */
export function textContent(text: string): ToolCallContent {
  return { type: "content", content: { type: "text", text } };
}
