import { lstat, readdir, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";
import type { WorkspaceRoot } from "./workspace-root.js";

/** The `.gitignore` rules of one directory, matched against paths relative to it. */
interface IgnoreRules {
  /** Workspace-relative directory, `""` for the root. */
  base: string;
  rules: Ignore;
}

/**
 * The workspace's files below `start` (workspace-relative; `""` for all), in a stable order, as git would see
 * them: `.git` and whatever a `.gitignore` on the way ignores are skipped, nested `.gitignore` files included.
 * Symlinks are never followed out of the workspace: a link to a file inside counts as that file; a link to a
 * directory is skipped (it could loop).
 */
export async function* workspaceFiles(root: WorkspaceRoot, start = ""): AsyncGenerator<string> {
  const inherited: IgnoreRules[] = [];
  // The .gitignore files of the directories above `start` apply below it too.
  const parts = start === "" ? [] : start.split("/");
  for (let depth = 0; depth < parts.length; depth++) {
    const base = parts.slice(0, depth).join("/");
    const rules = await ignoreRulesOf(root, base);
    if (rules) inherited.push(rules);
  }
  yield* walk(root, start, inherited);
}

async function* walk(
  root: WorkspaceRoot,
  directory: string,
  inherited: IgnoreRules[],
): AsyncGenerator<string> {
  const own = await ignoreRulesOf(root, directory);
  const rules = own ? [...inherited, own] : inherited;
  const entries = await readdir(join(root.path, directory), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name === ".git") continue;
    const path = directory === "" ? entry.name : `${directory}/${entry.name}`;
    let isDirectory = entry.isDirectory();
    if (entry.isSymbolicLink()) {
      const target = await realpath(join(root.path, path)).catch(() => undefined);
      if (target === undefined || !root.contains(target)) continue;
      if ((await lstat(target)).isDirectory()) continue;
      isDirectory = false;
    } else if (!isDirectory && !entry.isFile()) {
      continue;
    }
    if (isIgnored(rules, path, isDirectory)) continue;
    if (isDirectory) yield* walk(root, path, rules);
    else yield path;
  }
}

function isIgnored(rules: readonly IgnoreRules[], path: string, isDirectory: boolean): boolean {
  return rules.some(({ base, rules: ignored }) => {
    const below = base === "" ? path : path.slice(base.length + 1);
    return ignored.ignores(isDirectory ? `${below}/` : below);
  });
}

async function ignoreRulesOf(root: WorkspaceRoot, directory: string): Promise<IgnoreRules | undefined> {
  const file = join(root.path, directory, ".gitignore");
  const text = await readFile(file, "utf8").catch(() => undefined);
  return text === undefined ? undefined : { base: directory, rules: ignore().add(text) };
}
