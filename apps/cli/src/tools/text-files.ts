import type { WorkspacePath } from "../workspace/workspace-root.js";

/** A file of the workspace, its path already checked by `WorkspaceRoot.resolve`. */
type CheckedFile = Pick<WorkspacePath, "path" | "absolutePath">;

/**
 * Where `read_file` and `apply_patch` read and write a file's text once `WorkspaceRoot` has allowed its path: the
 * disk (`diskTextFiles`), or an editor's buffers, unsaved changes included (`aptix acp`). Listing and searching
 * always walk the disk, under the same root.
 */
export interface TextFiles {
  /** The text of a regular file; throws, naming the file, when it is binary or larger than the tools read. */
  read(file: CheckedFile): Promise<string>;
  /** Writes the file's new text (`null`: removes it); `existed`: whether the file was there when planned. */
  write(file: CheckedFile, content: string | null, existed: boolean): Promise<void>;
}
