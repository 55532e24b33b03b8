import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Deadline } from "./deadline.js";
import { isGitName } from "./git-name.js";
import { type IgnoreRules, ignoreRulesOf, isIgnored } from "./gitignore.js";
import type { WorkspaceRoot } from "./workspace-root.js";

/**
 * The workspace's files below `start` (a folder `WorkspaceRoot.resolve` gave; `""` for all), in a stable order,
 * as git would see them: `.git` at any depth is skipped, and so is whatever a `.gitignore` on the way ignores
 * (nested `.gitignore` files included, and those above the workspace in its repository) unless the root allows
 * ignored files. A symlink counts as a file only when
 * it resolves for reading to a file (inside, not closed); a link to a folder is skipped (it could loop). Past
 * `deadline` the walk stops: the caller tells a partial answer by `deadline.expired`.
 */
export async function* workspaceFiles(
  root: WorkspaceRoot,
  start = "",
  deadline?: Deadline,
): AsyncGenerator<string> {
  const inherited: IgnoreRules[] = [...root.inheritedIgnoreRules];
  // The .gitignore files of the directories above `start` apply below it too.
  const parts = start === "" ? [] : start.split("/");
  for (let depth = 0; depth < parts.length && !root.allowIgnored; depth++) {
    const rules = await ignoreRulesOf(root.path, parts.slice(0, depth).join("/"));
    if (rules) inherited.push(rules);
  }
  yield* walk(root, start, inherited, deadline);
}

async function* walk(
  root: WorkspaceRoot,
  directory: string,
  inherited: IgnoreRules[],
  deadline: Deadline | undefined,
): AsyncGenerator<string> {
  const own = root.allowIgnored ? undefined : await ignoreRulesOf(root.path, directory);
  const rules = own ? [...inherited, own] : inherited;
  const entries = await readdir(join(root.path, directory), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (deadline?.expired) return;
    if (isGitName(entry.name)) continue;
    const path = directory === "" ? entry.name : `${directory}/${entry.name}`;
    if (entry.isSymbolicLink()) {
      const target = await root.resolve(path, "read").catch(() => undefined);
      if (target?.stats?.isFile() && !isIgnored(rules, path, false)) yield path;
    } else if (entry.isDirectory()) {
      if (!isIgnored(rules, path, true)) yield* walk(root, path, rules, deadline);
    } else if (entry.isFile()) {
      if (!isIgnored(rules, path, false)) yield path;
    }
  }
}
