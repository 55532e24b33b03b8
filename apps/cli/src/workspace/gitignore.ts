import { lstat, readFile } from "node:fs/promises";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";

/** The `.gitignore` rules of one directory, matched against paths relative to it. */
export interface IgnoreRules {
  /** Workspace-relative directory, `""` for the root. */
  base: string;
  rules: Ignore;
}

/**
 * The rules of `directory`'s `.gitignore`, if it has one. Like git (since 2.32), a `.gitignore` that is a symlink
 * is not read; neither is anything but a regular file (a FIFO would block the read forever).
 */
export async function ignoreRulesOf(rootPath: string, directory: string): Promise<IgnoreRules | undefined> {
  const file = join(rootPath, directory, ".gitignore");
  const stats = await lstat(file).catch(() => undefined);
  if (!stats?.isFile()) return undefined;
  const text = await readFile(file, "utf8").catch(() => undefined);
  return text === undefined ? undefined : { base: directory, rules: ignore().add(text) };
}

/** Whether any of the rules ignores the workspace-relative `path` (or a folder above it). */
export function isIgnored(rules: readonly IgnoreRules[], path: string, isDirectory: boolean): boolean {
  return rules.some(({ base, rules: ignored }) => {
    const below = base === "" ? path : path.slice(base.length + 1);
    return ignored.ignores(isDirectory ? `${below}/` : below);
  });
}

/** Whether the `.gitignore` files of the workspace (the root's and those of the folders on the way) ignore `path`. */
export async function isIgnoredPath(rootPath: string, path: string, isDirectory: boolean): Promise<boolean> {
  const parts = path.split("/");
  const rules: IgnoreRules[] = [];
  for (let depth = 0; depth < parts.length; depth++) {
    const found = await ignoreRulesOf(rootPath, parts.slice(0, depth).join("/"));
    if (found) rules.push(found);
  }
  return isIgnored(rules, path, isDirectory);
}
