import { realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, sep, win32 } from "node:path";

/** A path the model gave that would reach outside the workspace: the tool's `errorMessage` says why. */
export class OutsideWorkspaceError extends Error {
  override readonly name = "OutsideWorkspaceError";
}

/**
 * The workspace directory, the only place the CLI's tools read or write. A path from the model is relative,
 * has no `..` segment, and resolves (symlinks followed with `realpath`) to the root or below it; anything
 * else is refused before a byte is read.
 */
export class WorkspaceRoot {
  private constructor(
    /** The real path of the root (symlinks resolved). */
    readonly path: string,
  ) {}

  static async open(directory: string): Promise<WorkspaceRoot> {
    return new WorkspaceRoot(await realpath(directory));
  }

  /**
   * The real absolute path of `relativePath` inside the workspace; for a path that does not exist yet (a file
   * a patch creates), its nearest existing ancestor must resolve inside. `""` is the root.
   */
  async resolve(relativePath: string): Promise<string> {
    if (isAbsolute(relativePath) || win32.isAbsolute(relativePath)) {
      throw new OutsideWorkspaceError(
        `${relativePath} is an absolute path: give a path relative to the workspace root.`,
      );
    }
    if (relativePath.split(/[\\/]/).includes("..")) {
      throw new OutsideWorkspaceError(`${relativePath} contains "..": give a path inside the workspace.`);
    }
    const lexical = join(this.path, relativePath);
    const real = await realpathOfNearest(lexical);
    if (!this.contains(real)) {
      throw new OutsideWorkspaceError(`${relativePath} resolves outside the workspace (through a symlink).`);
    }
    return real;
  }

  /** Whether a real absolute path is the root or below it. */
  contains(realPath: string): boolean {
    return (
      realPath === this.path || realPath.startsWith(this.path.endsWith(sep) ? this.path : this.path + sep)
    );
  }

  /** The workspace-relative path of an absolute path below the root, with `/` separators. */
  relativeOf(absolutePath: string): string {
    return relative(this.path, absolutePath).split(sep).join("/");
  }
}

/** `realpath` of the path, or of its nearest existing ancestor with the missing rest appended. */
async function realpathOfNearest(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    const parent = dirname(path);
    if (parent === path) throw error;
    return join(await realpathOfNearest(parent), relative(parent, path));
  }
}
