import { lstat, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";
import { gitRepositoryOf } from "./git-repository.js";

/** The `.gitignore` rules of one directory, with how a workspace-relative path reads from that directory. */
export interface IgnoreRules {
  rules: Ignore;
  /** The workspace-relative `path` as relative to the `.gitignore`'s directory, as its rules match it. */
  from(path: string): string;
}

/**
 * The rules of the `.gitignore` of `directory` (workspace-relative, `""` for the root), if it has one. Like git
 * (since 2.32), a `.gitignore` that is a symlink is not read; neither is anything but a regular file (a FIFO
 * would block the read forever).
 */
export function ignoreRulesOf(rootPath: string, directory: string): Promise<IgnoreRules | undefined> {
  return rulesIn(join(rootPath, directory), (path) =>
    directory === "" ? path : path.slice(directory.length + 1),
  );
}

/**
 * The rules of the `.gitignore` files above the workspace in its git repository, from the repository's root
 * down to the workspace's parent: git applies them to the workspace's files too. None outside a repository.
 */
export async function repositoryIgnoreRules(rootPath: string): Promise<IgnoreRules[]> {
  const repository = gitRepositoryOf(rootPath);
  if (repository === undefined || repository === rootPath) return [];
  const rules: IgnoreRules[] = [];
  const folders = relative(repository, rootPath).split(sep);
  for (let depth = 0; depth < folders.length; depth++) {
    // The workspace as this directory's .gitignore sees it: the folders between them, then the path.
    const between = folders.slice(depth).join("/");
    const found = await rulesIn(join(repository, ...folders.slice(0, depth)), (path) => `${between}/${path}`);
    if (found) rules.push(found);
  }
  return rules;
}

async function rulesIn(directory: string, from: (path: string) => string): Promise<IgnoreRules | undefined> {
  const file = join(directory, ".gitignore");
  const stats = await lstat(file).catch(() => undefined);
  if (!stats?.isFile()) return undefined;
  const text = await readFile(file, "utf8").catch(() => undefined);
  return text === undefined ? undefined : { rules: ignore().add(text), from };
}

/** Whether any of the rules ignores the workspace-relative `path` (or a folder above it). */
export function isIgnored(rules: readonly IgnoreRules[], path: string, isDirectory: boolean): boolean {
  return rules.some(({ rules: ignored, from }) => {
    const below = from(path);
    return ignored.ignores(isDirectory ? `${below}/` : below);
  });
}

/**
 * Whether the `.gitignore` files of the workspace (`inherited`: those above it in its repository; then the root's
 * and those of the folders on the way) ignore `path`.
 */
export async function isIgnoredPath(
  rootPath: string,
  inherited: readonly IgnoreRules[],
  path: string,
  isDirectory: boolean,
): Promise<boolean> {
  const parts = path.split("/");
  const rules = [...inherited];
  for (let depth = 0; depth < parts.length; depth++) {
    const found = await ignoreRulesOf(rootPath, parts.slice(0, depth).join("/"));
    if (found) rules.push(found);
  }
  return isIgnored(rules, path, isDirectory);
}
