import { workspaceFiles } from "../workspace/workspace-files.js";
import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import { globFilter } from "./glob-filter.js";
import { listFilesArguments, parseArguments } from "./tool-arguments.js";
import type { WorkspaceTool } from "./workspace-tool.js";

/** The most paths one answer lists; the model narrows with `path` or `glob`. */
const MAX_FILES = 1000;

/**
 * `list_files { path?, glob? }`: the workspace's files (or a folder's), without `.git` and what .gitignore
 * ignores. Past the deadline it answers the files found so far with `truncated` and `timedOut` set.
 */
export function listFilesTool(root: WorkspaceRoot): WorkspaceTool {
  return async (args, deadline) => {
    const { path, glob } = parseArguments(listFilesArguments, "list_files", args);
    const directory = await root.resolve(path ?? "", "read");
    if (!directory.stats?.isDirectory()) throw new Error(`${path} is a file, not a folder: use read_file.`);
    const matches = globFilter(glob);
    const files: string[] = [];
    for await (const file of workspaceFiles(root, directory.path, deadline)) {
      if (!matches(file)) continue;
      if (files.length === MAX_FILES) return { files, truncated: true };
      files.push(file);
    }
    return deadline.expired ? { files, truncated: true, timedOut: true } : { files, truncated: false };
  };
}
