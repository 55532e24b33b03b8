import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { IdentifierSchema, validateUsageQuery } from "@aptix/contracts";
import { type DefaultWorkspace, defaultWorkspace } from "./workspace/default-workspace.js";
import { workspaceIdOf } from "./workspace/workspace-id.js";

const USAGE = `Usage: aptix <command> [options]

Commands:
  chat                   talk with the agent about the workspace (interactive; /help lists
                         its commands: /new, /sessions, /resume <id>, /exit, …)
  run "<instruction>"    run one turn and exit
  index [dir]            push the workspace's files for retrieval, honouring every .gitignore
                         from the git repository's root down (default dir: the workspace)
  session <id>           show a session: its mode and its turns
  sessions               list your most recently active sessions
  usage                  your LLM usage and its cost, by UTC day (default), model or session;
                         --from and --to (UTC dates YYYY-MM-DD, both included) come together,
                         else the current UTC month; --group-by day|model|session
  acp                    serve the Agent Client Protocol on stdin/stdout, for editors
                         (Zed, JetBrains IDEs, Neovim, Emacs) that start aptix as their agent;
                         each session's workspace is the folder the editor opens

Options:
  --url URL              the Aptix service (default: $APTIX_URL, else http://127.0.0.1:8787)
  --api-key KEY          the API key (default: $APTIX_API_KEY; none for a local-mode server)
  --workspace DIR        the workspace the tools work in (default: the root of the git
                         repository holding the current directory when you own it and it is
                         the current directory or lies below $HOME, else the current directory);
                         its workspaceId is the folder's name, "-" and 8 hex digits of the
                         sha256 of its real path
  --session ID           the session to continue (default: a new one)
  --continue             continue this workspace's latest session (chat, run)
  -y, --yes              apply patches and approve the service's tools that ask first without
                         asking, but patches that change files that run code when an editor
                         or tool opens the project (.vscode/, .envrc, …) and tool calls whose
                         arguments name a path outside the workspace
  --allow-ignored        let the tools read, list, search and patch what .gitignore
                         ignores, and .gitignore files (chat, run, acp; .git stays closed)
  --json                 print one JSON object as the last line of stdout
  -h, --help             show this help
  --version              print the version of aptix

A turn whose workspace was never indexed runs without its files as context: aptix says so
and names the command that fixes it (aptix index).

Exit codes: 0 done, 1 the turn failed, 2 usage error, 130 stopped by Ctrl-C (the turn is
cancelled on the service).
`;

/** `aptix acp --help`: what an editor's configuration needs, not the terminal commands. */
const ACP_USAGE = `Usage: aptix acp [options]

Serves the Agent Client Protocol on stdin/stdout: an editor (Zed, JetBrains IDEs, Neovim,
Emacs) starts it as its agent. Each session's workspace is the folder the editor opens, and
the editor asks for patch approvals, so --workspace, --session, --continue, --yes and --json
do not apply.

Options:
  --url URL              the Aptix service (default: $APTIX_URL, else http://127.0.0.1:8787)
  --api-key KEY          the API key (default: $APTIX_API_KEY; none for a local-mode server)
  --allow-ignored        let the tools read, list, search and patch what .gitignore ignores
  -h, --help             show this help

Zed, in settings.json: "agent_servers": { "Aptix": { "type": "custom", "command": "aptix",
"args": ["acp"], "env": { "APTIX_URL": "http://127.0.0.1:8787" } } } (docs/editors.md).
`;

/** A command line the CLI cannot run: exit code 2 with one line saying why. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

type Command =
  | { name: "chat" }
  | { name: "run"; instruction: string }
  | { name: "index" }
  | { name: "session"; sessionId: string }
  | { name: "sessions" }
  | { name: "usage"; from?: string; to?: string; groupBy?: string }
  | { name: "acp" }
  | { name: "help"; usage: string }
  | { name: "version" };

export interface CliOptions {
  command: Command;
  url: string;
  apiKey: string | undefined;
  /** Absolute. */
  workspaceDir: string;
  /** Whether `--workspace` or `index`'s argument named it (else it is the default: the git root or cwd). */
  workspaceGiven: boolean;
  /** The git repository the default workspace is not, though it holds the current directory, and why. */
  passedOver: DefaultWorkspace["passedOver"];
  /** The service's catalog file (`$APTIX_CONFIG`, absolute): the tools ask before every write to it. */
  configFile: string | undefined;
  /** The directory's name and 8 hex digits of its real path's sha256 (`workspaceIdOf`). */
  workspaceId: string;
  sessionId: string;
  /** Whether `--session` named the session (else it is new). */
  sessionGiven: boolean;
  /** `--continue`: the workspace's latest session is looked up and used instead of a new one. */
  continueLatest: boolean;
  yes: boolean;
  /** Whether the tools may open what .gitignore ignores (`--allow-ignored`). */
  allowIgnored: boolean;
  json: boolean;
}

/** Reads the command line strictly (an unknown option or command, or a missing argument, is a UsageError). */
export function parseCliOptions(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): CliOptions {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    // Node's own message goes on to explain `--`: the first sentence names the mistake.
    const [mistake = ""] = (error as Error).message.split(/(?<=\.) /, 1);
    throw new UsageError(mistake.replace(/\.$/, ""));
  }
  const { values, positionals } = parsed;
  const [name, ...rest] = positionals;
  const command: Command = values.version
    ? { name: "version" }
    : values.help
      ? { name: "help", usage: name === "acp" ? ACP_USAGE : USAGE }
      : commandOf(name, rest);
  const range = { from: values.from, to: values.to, groupBy: values["group-by"] };
  if (
    command.name !== "usage" &&
    command.name !== "help" &&
    command.name !== "version" &&
    Object.values(range).some((value) => value !== undefined)
  )
    throw new UsageError("--from, --to and --group-by apply to usage only.");
  if (command.name === "usage") {
    for (const [key, value] of Object.entries(range))
      if (value !== undefined) Object.assign(command, { [key]: value });
    checkUsageQuery(range);
  }
  const workspaceArgument = command.name === "index" ? rest[0] : undefined;
  const given = workspaceArgument ?? values.workspace;
  const workspace: DefaultWorkspace =
    given === undefined
      ? defaultWorkspace({ cwd, home: env.HOME || env.USERPROFILE, uid: process.getuid?.() })
      : { directory: resolve(cwd, given) };
  const workspaceDir = workspace.directory;
  const fromEnv = values.url === undefined && !!env.APTIX_URL;
  const url = values.url ?? (env.APTIX_URL || "http://127.0.0.1:8787");
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new UsageError(`${fromEnv ? "APTIX_URL" : "--url"} ${url} is not an http(s) URL.`);
  }
  if (values.session !== undefined) checkIdentifier("--session", values.session);
  if (values.continue && values.session !== undefined)
    throw new UsageError("--continue and --session both name the session: give one.");
  if (values.continue && command.name !== "chat" && command.name !== "run")
    throw new UsageError("--continue applies to chat and run only.");
  const editorOwned = (["workspace", "session", "yes", "json"] as const).filter(
    (name) => values[name] !== undefined,
  );
  if (command.name === "acp" && editorOwned.length > 0) {
    throw new UsageError(
      `aptix acp takes its workspaces, sessions and patch approvals from the editor: ${editorOwned.map((name) => `--${name}`).join(", ")} do not apply.`,
    );
  }
  return {
    command,
    url,
    apiKey: values["api-key"] ?? (env.APTIX_API_KEY || undefined),
    workspaceDir,
    workspaceGiven: given !== undefined,
    passedOver: workspace.passedOver,
    configFile: env.APTIX_CONFIG ? resolve(cwd, env.APTIX_CONFIG) : undefined,
    workspaceId: workspaceIdOf(workspaceDir),
    sessionId: values.session ?? crypto.randomUUID(),
    sessionGiven: values.session !== undefined,
    continueLatest: values.continue ?? false,
    yes: values.yes ?? false,
    allowIgnored: values["allow-ignored"] ?? false,
    json: values.json ?? false,
  };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      "api-key": { type: "string" },
      workspace: { type: "string" },
      session: { type: "string" },
      continue: { type: "boolean" },
      yes: { type: "boolean", short: "y" },
      "allow-ignored": { type: "boolean" },
      json: { type: "boolean" },
      from: { type: "string" },
      to: { type: "string" },
      "group-by": { type: "string" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean" },
    },
  });
}

function commandOf(name: string | undefined, rest: string[]): Command {
  const atMost = (count: number) => {
    if (rest.length > count)
      throw new UsageError(`aptix ${name}: unexpected argument ${JSON.stringify(rest[count])}.`);
  };
  switch (name) {
    case "help":
      return { name: "help", usage: USAGE };
    case "chat":
      atMost(0);
      return { name: "chat" };
    case "run": {
      atMost(1);
      const instruction = rest[0]?.trim();
      if (!instruction) throw new UsageError('aptix run needs an instruction: aptix run "<instruction>".');
      return { name: "run", instruction };
    }
    case "index":
      atMost(1);
      return { name: "index" };
    case "session": {
      atMost(1);
      const sessionId = rest[0];
      if (sessionId === undefined)
        throw new UsageError("aptix session needs a session id: aptix session <id>.");
      checkIdentifier("the session id", sessionId);
      return { name: "session", sessionId };
    }
    case "sessions":
      atMost(0);
      return { name: "sessions" };
    case "usage":
      atMost(0);
      return { name: "usage" };
    case "acp":
      atMost(0);
      return { name: "acp" };
    case undefined:
      throw new UsageError("Name a command.");
    default:
      throw new UsageError(`Unknown command ${JSON.stringify(name)}.`);
  }
}

function checkIdentifier(what: string, value: string): void {
  const parsed = IdentifierSchema.safeParse(value);
  if (!parsed.success)
    throw new UsageError(`${what} ${JSON.stringify(value)} ${parsed.error.issues[0]?.message}.`);
}

/** The options of `aptix usage` by the query's fields, for messages that name what the user typed. */
const USAGE_OPTIONS: Record<string, string> = { from: "--from", to: "--to", groupBy: "--group-by" };

/**
 * `aptix usage`'s options checked as the service checks its query (dates, a range given whole, a grouping it
 * knows), so a mistake is a usage error here rather than a refused request.
 */
function checkUsageQuery(query: { from?: string; to?: string; groupBy?: string }): void {
  const checked = validateUsageQuery(
    Object.fromEntries(
      Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ),
  );
  if (checked.successful) return;
  const fields = (
    checked.errors[0]?.details as { fields?: Array<{ path: string; message: string }> } | undefined
  )?.fields;
  // The service's messages name the fields as its query spells them (`from`, `groupBy`): named here as options.
  const option = (name: string) => USAGE_OPTIONS[name] ?? name;
  const problems = (fields ?? []).map(
    ({ path, message }) =>
      `${option(path)} ${message.replace(/`(\w+)`/g, (_all, name: string) => option(name))}`,
  );
  throw new UsageError(`${problems.join("; ") || checked.errors[0]?.message}.`);
}
