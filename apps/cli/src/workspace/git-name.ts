/**
 * Whether a file or folder name is git's own directory: `.git` in any case (case-insensitive file systems open
 * `.GIT` as `.git`), with the trailing dots and spaces Windows drops, or its 8.3 short name `git~1`.
 */
export function isGitName(name: string): boolean {
  const trimmed = name.toLowerCase().replace(/[. ]+$/, "");
  return trimmed === ".git" || trimmed === "git~1";
}
