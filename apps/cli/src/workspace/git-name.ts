import { comparableName } from "./comparable-name.js";

/**
 * Whether a file or folder name is git's own directory on some file system: `.git` as `comparableName` compares
 * it (`.GIT`, `.git.`, `.git::$INDEX_ALLOCATION`, `.g\u200cit`), or an 8.3 short name `git~N` (Windows gives
 * `.git` the short name `GIT~1`, or a higher number when that one is taken). A backslash separates folders on
 * Windows, so each part of `a\.git` is judged too.
 */
export function isGitName(name: string): boolean {
  return name.split("\\").some((part) => {
    const compared = comparableName(part);
    return compared === ".git" || /^git~\d+$/.test(compared);
  });
}

/**
 * Whether a name is a `.gitignore` file on some file system, as `isGitName` judges `.git`: its 8.3 short names are
 * `GITIGN~N`, or `GI250A~N` (the hashed form git also refuses) once the first four are taken.
 */
export function isGitignoreName(name: string): boolean {
  return name.split("\\").some((part) => {
    const compared = comparableName(part);
    return compared === ".gitignore" || /^(gitign|gi250a)~\d+$/.test(compared);
  });
}
