import { plural } from "../terminal/plural.js";
import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import type { TextFiles } from "./text-files.js";
import { parseArguments, readFileArguments } from "./tool-arguments.js";
import type { Located, WorkspaceTool } from "./workspace-tool.js";

/**
 * `read_file { path, startLine?, endLine? }`: a text file of the workspace, whole or a range of lines, read from
 * `files` (an editor's buffer, unsaved changes included, with `aptix acp`) once the root allowed its path, which
 * is then `located`.
 */
export function readFileTool(root: WorkspaceRoot, files: TextFiles, located: Located): WorkspaceTool {
  return async (args) => {
    const { path, startLine, endLine } = parseArguments(readFileArguments, "read_file", args);
    const { absolutePath, stats, path: resolved } = await root.resolve(path, "read");
    if (stats?.isDirectory()) throw new Error(`${path} is a directory: use list_files.`);
    // A FIFO or a device would block the read, or never end it.
    if (!stats?.isFile()) throw new Error(`${path} is not a regular file.`);
    located([resolved]);
    const text = await files.read({ path: resolved, absolutePath });
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    const first = startLine ?? 1;
    const last = Math.min(endLine ?? lines.length, lines.length);
    if (first > last && lines.length > 0) {
      throw new Error(
        `Lines ${first}-${endLine ?? "end"} are not in ${path}, which has ${plural(lines.length, "line")}.`,
      );
    }
    const contents = startLine || endLine ? `${lines.slice(first - 1, last).join("\n")}\n` : text;
    return { path, contents, startLine: first, endLine: last, totalLines: lines.length };
  };
}
