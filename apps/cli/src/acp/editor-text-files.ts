import type { AgentContext, FileSystemCapabilities } from "@agentclientprotocol/sdk";
import { WORKSPACE_LIMITS } from "@aptix/contracts";
import { diskTextFiles } from "../tools/disk-text-files.js";
import type { TextFiles } from "../tools/text-files.js";
import { editorPathOf } from "./tool-call-view.js";

export interface EditorTextFilesOptions {
  client: AgentContext;
  sessionId: string;
  /** What the editor offered in `initialize`. */
  fs: FileSystemCapabilities | undefined;
  /** The workspace as the editor named it (`cwd`): its buffers are keyed by the paths it knows. */
  editorRoot: string;
}

/**
 * File text through the editor, for the paths `WorkspaceRoot` allowed: `fs/read_text_file` when offered (the
 * editor answers with its buffer, unsaved changes included), `fs/write_text_file` when offered (the editor
 * updates its buffer and the disk); the disk otherwise. Removing a file is always done on disk: ACP has no call
 * for it.
 */
export function editorTextFiles(options: EditorTextFilesOptions): TextFiles {
  const { client, sessionId, fs, editorRoot } = options;
  const editorPath = (path: string) => editorPathOf(editorRoot, path);
  return {
    async read(file) {
      if (fs?.readTextFile !== true) return diskTextFiles.read(file);
      const { content } = await client.request("fs/read_text_file", {
        sessionId,
        path: editorPath(file.path),
      });
      // A buffer counts in UTF-16 units here; the disk's limit is in bytes, and a unit is at least one byte.
      if (content.length > WORKSPACE_LIMITS.maxDocumentBytes)
        throw new Error(`${file.path} is longer than the tools read.`);
      // As on disk (git's heuristic): a NUL marks a binary file, whatever the editor made of its bytes.
      if (content.includes("\0")) throw new Error(`${file.path} is a binary file.`);
      return content;
    },
    async write(file, content, existed) {
      if (content === null || fs?.writeTextFile !== true) return diskTextFiles.write(file, content, existed);
      await client.request("fs/write_text_file", { sessionId, path: editorPath(file.path), content });
    },
  };
}
