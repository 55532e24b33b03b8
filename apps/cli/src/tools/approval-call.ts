import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { relativeInside } from "../workspace/relative-inside.js";

/** How much of one argument's value a prompt shows: a longer one is cut there, its full length said. */
const SHOWN_CHARACTERS = 200;

/** One argument as the prompt shows it: its name, and its value as JSON (object keys sorted), maybe cut. */
export interface ShownArgument {
  name: string;
  value: string;
}

/**
 * A server tool's call that asks first, as the user is asked about it (terminal and editor alike). Every argument
 * is shown, in the order of their names (the model picks the order it sends them in, and would put what it hides
 * last), each value cut on its own when long. "Always" holds for the tool with the same argument names
 * (`alwaysKey`), and never for a call whose arguments name a path outside the workspace (`outsidePaths`).
 */
export class ApprovalCall {
  readonly arguments: readonly ShownArgument[];
  /** What "always" approves: the tool, and the names of its arguments. */
  readonly alwaysKey: string;
  /** The argument values that name a path outside every one of the workspace's folders. */
  readonly outsidePaths: readonly string[];

  /** The paths outside, for a sentence: "a path outside the workspace (x)", "paths outside the workspace (x, y)". */
  get outside(): string {
    const paths = this.outsidePaths;
    return `${paths.length === 1 ? "a path" : "paths"} outside the workspace (${paths.join(", ")})`;
  }

  /** `workspaces`: the workspace's folders, absolute (its path as given and its real path). */
  constructor(tool: string, argumentsJson: string, workspaces: readonly string[], home: string | undefined) {
    const parsed = parsedObject(argumentsJson);
    if (parsed === undefined) {
      // The service checked them against the tool's schema, so this is not expected; shown all the same.
      this.arguments = [{ name: "arguments", value: shownValue(argumentsJson) }];
      this.alwaysKey = JSON.stringify([tool, null]);
      this.outsidePaths = [];
      return;
    }
    const names = Object.keys(parsed).sort();
    this.arguments = names.map((name) => ({ name, value: shownValue(parsed[name]) }));
    this.alwaysKey = JSON.stringify([tool, names]);
    this.outsidePaths = stringsIn(parsed).filter((text) => leavesWorkspace(text, workspaces, home));
  }
}

function parsedObject(json: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** `value` with the keys of every object in it in sorted order, so that two spellings of a call read alike. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]),
  );
}

/**
 * A value as JSON (object keys sorted), whole when short, else its start and its full length: a string's in
 * characters, another value's in characters of JSON. Never cut inside a surrogate pair.
 */
function shownValue(value: unknown): string {
  const json = JSON.stringify(sortedKeys(value)) ?? "null";
  const characters = [...json];
  if (characters.length <= SHOWN_CHARACTERS) return json;
  const length =
    typeof value === "string" ? `${[...value].length} characters` : `${characters.length} characters of JSON`;
  return `${characters.slice(0, SHOWN_CHARACTERS).join("")}… (${length})`;
}

/** Every string in `value`, at any depth (the values, not the keys). */
function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value !== "object" || value === null) return [];
  return Object.values(value).flatMap(stringsIn);
}

/**
 * Whether `text`, read as a path, leads out of the workspace: an absolute path (POSIX or Windows, or a `file:`
 * URL) outside its folders, a home-relative one (`~`, `~user`), or a relative one whose `..` climbs out. Text
 * with a line break is content, not a path.
 */
function leavesWorkspace(text: string, workspaces: readonly string[], home: string | undefined): boolean {
  if (/[\r\n]/.test(text)) return false;
  let path = text;
  if (/^file:/i.test(path)) {
    try {
      path = fileURLToPath(path);
    } catch {
      // A `file:` URL naming another host, or none at all: where it leads is not known here.
      return true;
    }
  }
  if (/^[a-z]:[\\/]|^\\\\/i.test(path)) return true;
  if (path.startsWith("~")) {
    if (home === undefined || !/^~(\/|$)/.test(path)) return true;
    path = `${home}${path.slice(1)}`;
  }
  // A backslash separates on Windows, where the tool may run: `..\x` climbs as `../x` does.
  const slashed = path.replaceAll("\\", "/");
  if (!isAbsolute(slashed) && !slashed.split("/").includes("..")) return false;
  return workspaces.every((folder) => relativeInside(folder, resolve(folder, slashed)) === undefined);
}
