import { comparableName } from "./comparable-name.js";

/**
 * Folders whose files an editor or a tool runs, or takes commands from, when it opens the project: VS Code's tasks
 * and launch settings, Zed's and JetBrains' project settings (tasks, language servers, context servers), husky's
 * git hooks, dev containers' commands, Claude Code's and Cursor's hooks, rules and MCP servers, Aptix's own
 * project settings.
 */
const HOOK_FOLDERS = new Set([
  ".vscode",
  ".zed",
  ".idea",
  ".husky",
  ".devcontainer",
  ".claude",
  ".cursor",
  ".aptix",
]);

/**
 * Files a tool runs or obeys on its own: direnv loads `.envrc` on `cd`; npm's and yarn's config files name scripts,
 * registries and the yarn binary to run (`yarn-path`); pnpm runs `.pnpmfile.cjs` on install; a dev container's
 * `.devcontainer.json` names commands to run; pre-commit and lefthook install git hooks from theirs; `.mcp.json`
 * starts MCP servers for the agents that read it; mise and asdf install and run the tools theirs name.
 */
const HOOK_FILES = new Set([
  ".envrc",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pnpmfile.cjs",
  ".devcontainer.json",
  ".pre-commit-config.yaml",
  "lefthook.yml",
  "lefthook.yaml",
  ".lefthook.yml",
  ".lefthook.yaml",
  "lefthook-local.yml",
  "lefthook-local.yaml",
  ".mcp.json",
  "mise.toml",
  ".mise.toml",
  "mise.local.toml",
  ".mise.local.toml",
  ".tool-versions",
]);

/** Whole workspaces VS Code opens, with their tasks and settings: `*.code-workspace`. */
const HOOK_SUFFIXES = [".code-workspace"];

/**
 * Whether writing the workspace-relative `path` changes a file that runs code when an editor or a tool opens the
 * project, at any depth (a monorepo's package is a project of its own): a file in a hook folder, a GitHub Actions
 * workflow, a hook file, a VS Code workspace file, or one of `configFiles` (the service's catalog, `APTIX_CONFIG`,
 * which names the commands of MCP servers). Names are compared as the file systems compare them (`.VSCode`, `.envrc.`).
 */
export function isProjectHook(path: string, configFiles: readonly string[]): boolean {
  const names = path.split("/").map(comparableName);
  if (names.some((name) => HOOK_FOLDERS.has(name))) return true;
  if (names.some((name, index) => name === ".github" && names[index + 1] === "workflows")) return true;
  const file = names.at(-1) ?? "";
  if (HOOK_FILES.has(file) || HOOK_SUFFIXES.some((suffix) => file.endsWith(suffix))) return true;
  const compared = names.join("/");
  return configFiles.some((configFile) => configFile.split("/").map(comparableName).join("/") === compared);
}
