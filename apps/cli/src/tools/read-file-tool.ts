import { WORKSPACE_LIMITS } from "@aptix/contracts";
import { readTextFile } from "../workspace/text-file.js";
import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import { parseArguments, readFileArguments } from "./tool-arguments.js";
import type { WorkspaceTool } from "./workspace-tool.js";

/** `read_file { path, startLine?, endLine? }`: a text file of the workspace, whole or a range of lines. */
export function readFileTool(root: WorkspaceRoot): WorkspaceTool {
  return async (args) => {
    const { path, startLine, endLine } = parseArguments(readFileArguments, "read_file", args);
    const { absolutePath, stats } = await root.resolve(path, "read");
    if (stats?.isDirectory()) throw new Error(`${path} is a directory: use list_files.`);
    // A FIFO or a device would block the read, or never end it.
    if (!stats?.isFile()) throw new Error(`${path} is not a regular file.`);
    const file = await readTextFile(absolutePath, WORKSPACE_LIMITS.maxDocumentBytes);
    if (file.kind === "too_large")
      throw new Error(`${path} is ${file.bytes} bytes, more than read_file reads.`);
    if (file.kind === "binary") throw new Error(`${path} is a binary file.`);
    const lines = file.text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    const first = startLine ?? 1;
    const last = Math.min(endLine ?? lines.length, lines.length);
    if (first > last && lines.length > 0) {
      throw new Error(
        `Lines ${first}-${endLine ?? "end"} are not in ${path}, which has ${lines.length} lines.`,
      );
    }
    const contents = startLine || endLine ? `${lines.slice(first - 1, last).join("\n")}\n` : file.text;
    return { path, contents, startLine: first, endLine: last, totalLines: lines.length };
  };
}
