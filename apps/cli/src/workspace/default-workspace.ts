import { lstatSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { gitRepositoryOf } from "./git-repository.js";
import { relativeInside } from "./relative-inside.js";

/** The workspace a command works in when none is named, and why a git repository above was passed over. */
export interface DefaultWorkspace {
  /** Absolute. */
  directory: string;
  /** The root of the repository holding `cwd` that was not taken, and why; absent when none was passed over. */
  passedOver?: { repository: string; why: string };
}

export interface DefaultWorkspaceOptions {
  cwd: string;
  /** `$HOME`; none: no repository above `cwd` is taken. */
  home: string | undefined;
  /** The current user (`process.getuid()`); none where the platform has no uids (Windows). */
  uid: number | undefined;
}

/**
 * The root of the git repository holding `cwd` when the current user may be taken to have made it: it (and its
 * `.git`) belongs to `uid`, and it is `cwd` itself or lies below `home`. Otherwise `cwd`: a `.git` that another
 * user planted in `/tmp`, or a repository above the home directory (or the home directory itself, whose
 * `.ssh` would then be in reach), would make every folder below it the model's to read and patch.
 */
export function defaultWorkspace(options: DefaultWorkspaceOptions): DefaultWorkspace {
  const { cwd, home, uid } = options;
  let real: string;
  try {
    real = realpathSync(cwd);
  } catch {
    return { directory: cwd };
  }
  const repository = gitRepositoryOf(real);
  if (repository === undefined) return { directory: cwd };
  const foreign = [repository, join(repository, ".git")].some(
    (path) => uid !== undefined && lstatSync(path).uid !== uid,
  );
  if (foreign) return { directory: cwd, passedOver: { repository, why: "it belongs to another user" } };
  if (repository === real || isBelow(repository, home)) return { directory: repository };
  return {
    directory: cwd,
    passedOver: { repository, why: "it lies neither below your home directory nor in the current directory" },
  };
}

/** Whether `path` (real) lies strictly below the real path of `home`. */
function isBelow(path: string, home: string | undefined): boolean {
  if (home === undefined || home === "") return false;
  let realHome: string;
  try {
    realHome = realpathSync(home);
  } catch {
    return false;
  }
  const inside = relativeInside(realHome, path);
  return inside !== undefined && inside !== "";
}
