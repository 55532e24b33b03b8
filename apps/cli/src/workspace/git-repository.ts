import { lstatSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The root of the git repository holding `directory` (an absolute, real path): the nearest folder, `directory`
 * itself included, with a `.git` entry (a folder, or the file of a worktree or submodule); none outside one.
 */
export function gitRepositoryOf(directory: string): string | undefined {
  for (let folder = directory; ; folder = dirname(folder)) {
    if (lstatSync(join(folder, ".git"), { throwIfNoEntry: false }) !== undefined) return folder;
    if (dirname(folder) === folder) return undefined;
  }
}
