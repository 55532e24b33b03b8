import { stat } from "node:fs/promises";
import type { ToolHandler } from "@aptix/client";
import { workspaceFiles } from "../workspace/workspace-files.js";
import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import { globFilter } from "./glob-filter.js";
import { listFilesArguments, parseArguments } from "./tool-arguments.js";

/** The most paths one answer lists; the model narrows with `path` or `glob`. */
const MAX_FILES = 1000;

/** `list_files { path?, glob? }`: the workspace's files (or a folder's), without what .gitignore ignores. */
export function listFilesTool(root: WorkspaceRoot): ToolHandler {
  return async (args) => {
    const { path, glob } = parseArguments(listFilesArguments, "list_files", args);
    const directory = await root.resolve(path ?? "");
    const found = await stat(directory).catch(() => undefined);
    if (found === undefined) throw new Error(`${path} does not exist.`);
    if (!found.isDirectory()) throw new Error(`${path} is a file, not a folder: use read_file.`);
    const matches = globFilter(glob);
    const files: string[] = [];
    for await (const file of workspaceFiles(root, root.relativeOf(directory))) {
      if (!matches(file)) continue;
      if (files.length === MAX_FILES) return { files, truncated: true };
      files.push(file);
    }
    return { files, truncated: false };
  };
}
