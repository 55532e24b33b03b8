import { join } from "node:path";
import { WORKSPACE_LIMITS } from "@aptix/contracts";
import { readTextFile } from "../workspace/text-file.js";
import { workspaceFiles } from "../workspace/workspace-files.js";
import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import { globFilter } from "./glob-filter.js";
import { parseArguments, searchFilesArguments } from "./tool-arguments.js";
import type { WorkspaceTool } from "./workspace-tool.js";

const MAX_MATCHES = 200;
/** A matching line is cut to this many characters (minified files have very long lines). */
const MAX_LINE_CHARS = 300;

/**
 * `search_files { query, glob? }`: the lines holding `query` literally, ignoring case, in the workspace's text
 * files (not `.git`, not what .gitignore ignores, not binary or huge files). Past the deadline it answers the
 * matches found so far with `truncated` and `timedOut` set.
 */
export function searchFilesTool(root: WorkspaceRoot): WorkspaceTool {
  return async (args, deadline) => {
    const { query, glob } = parseArguments(searchFilesArguments, "search_files", args);
    const needle = query.toLowerCase();
    const matches = globFilter(glob);
    const found: Array<{ path: string; line: number; text: string }> = [];
    for await (const path of workspaceFiles(root, "", deadline)) {
      if (!matches(path)) continue;
      const file = await readTextFile(join(root.path, path), WORKSPACE_LIMITS.maxDocumentBytes);
      if (file.kind !== "text" || !file.text.toLowerCase().includes(needle)) continue;
      const lines = file.text.split("\n");
      for (const [index, line] of lines.entries()) {
        if (!line.toLowerCase().includes(needle)) continue;
        if (found.length === MAX_MATCHES) return { matches: found, truncated: true };
        found.push({ path, line: index + 1, text: line.slice(0, MAX_LINE_CHARS) });
      }
    }
    return deadline.expired
      ? { matches: found, truncated: true, timedOut: true }
      : { matches: found, truncated: false };
  };
}
