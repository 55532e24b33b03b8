import type { Stats } from "node:fs";
import { lstat, readlink, realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, sep, win32 } from "node:path";
import { isGitignoreName, isGitName } from "./git-name.js";
import { type IgnoreRules, isIgnoredPath, repositoryIgnoreRules } from "./gitignore.js";
import { isProjectHook } from "./project-hooks.js";
import { relativeInside } from "./relative-inside.js";

/** A path the model gave that the tools refuse (outside, in .git, ignored, missing): its message says why. */
class RefusedPathError extends Error {
  override readonly name = "RefusedPathError";
}

/** `read` may follow a symlink that stays inside; `write` follows none. */
export type Access = "read" | "write";

export interface WorkspaceRootOptions {
  /** `--allow-ignored`: what .gitignore ignores, and .gitignore files, are open. */
  allowIgnored: boolean;
  /** The service's catalog file (`APTIX_CONFIG`, absolute): a project hook when it lies in the workspace. */
  configFile?: string | undefined;
}

/** A path inside the workspace, every component checked. */
export interface WorkspacePath {
  /** Workspace-relative with `/` separators, symlinks resolved (`""` is the root). */
  path: string;
  absolutePath: string;
  /** `lstat` of what is there (never a symlink); `undefined` when nothing is (a file a patch creates). */
  stats: Stats | undefined;
}

/** As many symlinks as Linux follows in one path before `ELOOP`. */
const MAX_SYMLINKS = 40;

/**
 * The workspace directory, the only place the CLI's tools read or write, and the one place that decides what
 * they may touch. A path from the model is relative, has no `..` segment, and is resolved component by
 * component with `lstat`: a read may follow a symlink whose target stays inside, a write follows none (not even
 * a dangling one, which would create its target) and changes no file that has other hard links. `.git` is closed at any depth, and so is what `.gitignore`
 * ignores (and `.gitignore` files themselves, for writes) unless `allowIgnored`: the workspace's own `.gitignore`
 * files and, when it lies inside a git repository, those of the folders above it there.
 */
export class WorkspaceRoot {
  private constructor(
    /** The real path of the root (symlinks resolved). */
    readonly path: string,
    readonly allowIgnored: boolean,
    /** The rules of the `.gitignore` files above the root in its git repository (none with `allowIgnored`). */
    readonly inheritedIgnoreRules: readonly IgnoreRules[],
    /** The workspace-relative paths of the config files that lie in it (`configFile`). */
    private readonly configFiles: readonly string[],
  ) {}

  static async open(directory: string, options: WorkspaceRootOptions): Promise<WorkspaceRoot> {
    const path = await realpath(directory);
    const inherited = options.allowIgnored ? [] : await repositoryIgnoreRules(path);
    const configFile =
      options.configFile === undefined ? undefined : await insideOf(path, options.configFile);
    return new WorkspaceRoot(
      path,
      options.allowIgnored,
      inherited,
      configFile === undefined ? [] : [configFile],
    );
  }

  /**
   * Whether the workspace-relative `path` (as `resolve` gave it) is a file that runs code when an editor or a tool
   * opens the project (`isProjectHook`), this CLI's `APTIX_CONFIG` included: the user is asked before every write.
   */
  isProjectHook(path: string): boolean {
    return isProjectHook(path, this.configFiles);
  }

  /** `relativePath` checked and resolved for `access`; a RefusedPathError says why it is refused. */
  async resolve(relativePath: string, access: Access): Promise<WorkspacePath> {
    const pending = segmentsOf(relativePath);
    const refuse = (why: string) => new RefusedPathError(`${relativePath} ${why}`);
    const real: string[] = [];
    let stats: Stats | undefined = await stat(this.path);
    let links = 0;
    for (let name = pending.shift(); name !== undefined; name = pending.shift()) {
      if (name === "" || name === ".") continue;
      // Only a symlink's target brings `..` here: it steps back within what is already resolved.
      if (name === "..") {
        if (real.pop() === undefined) throw refuse("resolves outside the workspace (through a symlink).");
        continue;
      }
      if (isGitName(name)) throw refuse("is inside .git, which the tools never open.");
      real.push(name);
      const absolute = join(this.path, ...real);
      stats = await lstat(absolute).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return undefined;
        throw error;
      });
      if (stats === undefined) {
        if (access === "read") throw refuse("does not exist.");
        // A write creates the rest: it may not name `.git` either.
        if (pending.some(isGitName)) throw refuse("is inside .git, which the tools never open.");
        real.push(...pending.filter((rest) => rest !== "" && rest !== "."));
        break;
      }
      if (stats.isSymbolicLink()) {
        if (access === "write") {
          throw refuse(
            `${pending.length === 0 ? "is" : "goes through"} a symlink (${real.join("/")}): apply_patch never writes through one.`,
          );
        }
        if (++links > MAX_SYMLINKS) throw refuse("goes through too many symlinks.");
        pending.unshift(...(await this.#targetSegments(absolute, real, refuse)));
        continue;
      }
      if (pending.length > 0 && !stats.isDirectory())
        throw refuse(`goes through ${real.join("/")}, which is not a folder.`);
    }
    // A hard link's other names may be outside: writing one name changes them all.
    if (access === "write" && stats?.isFile() && stats.nlink > 1)
      throw refuse(`has ${stats.nlink} hard links: apply_patch never writes a file that has other names.`);
    const path = real.join("/");
    if (!this.allowIgnored && path !== "") {
      if (await isIgnoredPath(this.path, this.inheritedIgnoreRules, path, stats?.isDirectory() ?? false))
        throw refuse("is ignored by .gitignore: the tools open it only with --allow-ignored.");
      if (access === "write" && isGitignoreName(real.at(-1) ?? ""))
        throw refuse(
          "is a .gitignore file, which decides what the tools may open: change it with --allow-ignored.",
        );
    }
    return { path, absolutePath: join(this.path, ...real), stats };
  }

  /**
   * The segments a symlink's target stands for, to be resolved from the link's folder (`real` loses the link's
   * own name); an absolute target must lie inside the root, and then resolution starts over from the root.
   */
  async #targetSegments(link: string, real: string[], refuse: (why: string) => Error): Promise<string[]> {
    const target = await readlink(link);
    real.pop();
    const separators = sep === "\\" ? /[\\/]/ : /\//;
    if (!isAbsolute(target)) return target.split(separators);
    const inside = relativeInside(this.path, target);
    if (inside === undefined) throw refuse("resolves outside the workspace (through a symlink).");
    real.length = 0;
    return inside.split(separators);
  }
}

/**
 * `file` (absolute) relative to the real path `root`, with `/` separators, when it lies inside: by its real path,
 * or its folder's when it does not exist yet.
 */
async function insideOf(root: string, file: string): Promise<string | undefined> {
  const real =
    (await realpath(file).catch(() => undefined)) ??
    (await realpath(dirname(file)).then(
      (folder) => join(folder, basename(file)),
      () => file,
    ));
  const inside = relativeInside(root, real);
  return inside === undefined || inside === "" ? undefined : inside.split(sep).join("/");
}

/** The path's segments, or an RefusedPathError for an absolute path or a `..`. */
function segmentsOf(relativePath: string): string[] {
  if (isAbsolute(relativePath) || win32.isAbsolute(relativePath)) {
    throw new RefusedPathError(
      `${relativePath} is an absolute path: give a path relative to the workspace root.`,
    );
  }
  const segments = relativePath.split(sep === "\\" ? /[\\/]/ : /\//);
  // A backslash is a file name character on POSIX, but `..\x` must not pass for one.
  if (relativePath.split(/[\\/]/).includes("..")) {
    throw new RefusedPathError(`${relativePath} contains "..": give a path inside the workspace.`);
  }
  if (relativePath.includes("\0")) throw new RefusedPathError("The path holds a NUL character.");
  return segments;
}
