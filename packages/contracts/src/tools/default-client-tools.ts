/**
 * A tool the client runs (AGN-027 D): what the model is told about it. `parameters` is the JSON Schema of its
 * arguments; with `strict` the provider holds the model to it (OpenAI's strict mode: every property is
 * required, and an optional one is nullable, so `null` means "not given").
 */
export interface ClientToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly strict: boolean;
}

/** A parameter that may be left out: strict mode wants it listed as required, so it is nullable. */
const optional = (type: "string" | "integer", description: string) => ({ type: [type, "null"], description });

/**
 * The client tools of the service's built-in default catalog, which the `aptix` terminal client runs inside its
 * workspace. Defined once, here: the server offers exactly these, and the client executes exactly these.
 */
export const defaultClientTools: readonly ClientToolDefinition[] = Object.freeze([
  {
    name: "read_file",
    description:
      "Read a text file of the workspace, whole or a range of its lines. Answers { path, contents, startLine, endLine, totalLines }.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path relative to the workspace root, with '/' separators." },
        startLine: optional("integer", "First line to read, 1-based; null for the first."),
        endLine: optional("integer", "Last line to read, 1-based and inclusive; null for the last."),
      },
      required: ["path", "startLine", "endLine"],
      additionalProperties: false,
    },
    strict: true,
  },
  {
    name: "list_files",
    description:
      "List the files of the workspace (or of a folder of it), skipping what .gitignore ignores. Answers { files, truncated }.",
    parameters: {
      type: "object",
      properties: {
        path: optional("string", "Folder relative to the workspace root; null for the whole workspace."),
        glob: optional("string", "A glob the paths must match, such as 'src/**/*.ts'; null for every file."),
      },
      required: ["path", "glob"],
      additionalProperties: false,
    },
    strict: true,
  },
  {
    name: "search_files",
    description:
      "Search the workspace's files for a literal text, ignoring case, skipping what .gitignore ignores. Answers { matches: [{ path, line, text }], truncated }.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "The text to find, taken literally." },
        glob: optional(
          "string",
          "A glob the searched paths must match, such as '**/*.md'; null for every file.",
        ),
      },
      required: ["query", "glob"],
      additionalProperties: false,
    },
    strict: true,
  },
  {
    name: "apply_patch",
    description:
      "Change workspace files with a unified diff (one or more files; '--- /dev/null' creates a file, '+++ /dev/null' deletes one). The user may decline it. It applies whole or not at all.",
    parameters: {
      type: "object",
      properties: {
        patch: {
          type: "string",
          description: "A unified diff; paths relative to the workspace root, plain or git-style a/ and b/.",
        },
      },
      required: ["patch"],
      additionalProperties: false,
    },
    strict: true,
  },
]);
