import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The directory holding `pnpm-workspace.yaml`. */
function workspaceRoot(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, "pnpm-workspace.yaml"))) {
    const parent = dirname(directory);
    if (parent === directory) throw new Error("no pnpm-workspace.yaml above the test harness");
    directory = parent;
  }
  return directory;
}

export interface ServerProcessOptions {
  /** Set on top of this process's environment; `undefined` removes a variable. */
  env: Record<string, string | undefined>;
  /** How long to wait for the "listening" line. Default 30 s. */
  startTimeoutMs?: number;
  /**
   * Runs the README's command instead, `pnpm start` or `pnpm demo` at the workspace root (which builds first,
   * then runs the compiled server): the child is the `pnpm` process, as a person's terminal or a process manager
   * has it.
   */
  script?: "start" | "demo";
}

interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface LaunchedServer {
  pid: number;
  /** Every JSON log line on stdout so far, parsed. */
  logs: Array<Record<string, unknown>>;
  /** Everything else it printed (stderr, and stdout lines that are not JSON). */
  output(): string;
  /** Resolves when the process exits. */
  exited: Promise<ExitStatus>;
  /**
   * Resolves with the first log line `matches` (one logged already included); rejects when the process exits
   * first or after `timeoutMs`, killing it then, with what it printed.
   */
  waitForLine(
    matches: (line: Record<string, unknown>) => boolean,
    timeoutMs: number,
  ): Promise<Record<string, unknown>>;
  /**
   * Stops reading its stdout and closes this end of the pipe, as a shell does when the `| tee` or `| head` reading
   * it ends: its next lines meet a broken pipe.
   */
  closeOutput(): void;
  /** Sends `signal` to the process (default SIGTERM) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<ExitStatus>;
  /** Kills whatever is left of it, its descendants too (for cleanup after a failed test), and waits for the exit. */
  kill(): Promise<ExitStatus>;
  /** The processes it started and their own, as of now, by pid (Linux: read from /proc). */
  descendants(): number[];
}

export interface ServerProcess extends LaunchedServer {
  /** From the "listening" log line. */
  url: string;
}

/**
 * Runs the server from its sources (through tsx, as `pnpm dev` does, without the watcher) as a child process (with
 * `PORT=0` unless given), its stdout not a terminal: JSON log lines. Tests need no build this way; CI starts the
 * compiled server with `pnpm start`. The child leads its own process group, so cleanup reaches everything tsx
 * starts under it.
 */
export function launchServer(options: Pick<ServerProcessOptions, "env" | "script">): LaunchedServer {
  const root = workspaceRoot();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: "0", HOST: "127.0.0.1" };
  for (const [name, value] of Object.entries(options.env)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  // Node with tsx as a loader (the server's own dev dependency, resolved from its folder), not the tsx command:
  // that command is a second process relaying signals, and it SIGKILLs the server (exit 130) when the server
  // does not acknowledge a SIGINT within 30 ms, which a loaded machine misses.
  const child: ChildProcess = options.script
    ? spawn("pnpm", [options.script], { cwd: root, env, detached: true })
    : spawn(process.execPath, ["--conditions=@aptix/source", "--import", "tsx", "src/main.ts"], {
        cwd: join(root, "apps", "server"),
        env,
        detached: true,
      });
  const pid = child.pid;
  if (pid === undefined) throw new Error("could not spawn the server");

  const logs: Array<Record<string, unknown>> = [];
  let other = "";
  let pending = "";
  const lineListeners = new Set<() => void>();
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    pending += chunk;
    let newline = pending.indexOf("\n");
    while (newline >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      try {
        const parsed: unknown = JSON.parse(line);
        if (typeof parsed === "object" && parsed !== null) logs.push(parsed as Record<string, unknown>);
        else other += `${line}\n`;
      } catch {
        other += `${line}\n`;
      }
      for (const listener of lineListeners) listener();
      newline = pending.indexOf("\n");
    }
  });
  child.stderr?.on("data", (chunk: string) => {
    other += chunk;
  });
  const exited = new Promise<ExitStatus>((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  const kill = () => {
    // `pnpm start` runs the server in a process group of its own: the group's kill would not reach it.
    for (const descendant of descendantsOf(pid)) signalIgnoringGone(descendant, "SIGKILL");
    signalIgnoringGone(-pid, "SIGKILL");
    return exited;
  };

  const waitForLine: LaunchedServer["waitForLine"] = (matches, timeoutMs) =>
    new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        lineListeners.delete(check);
      };
      const timer = setTimeout(() => {
        done();
        kill();
        reject(new Error(`the server did not log the line awaited within ${timeoutMs} ms:\n${other}`));
      }, timeoutMs);
      const check = () => {
        const found = logs.find(matches);
        if (found) {
          done();
          resolve(found);
        }
      };
      lineListeners.add(check);
      check();
      exited.then((status) => {
        done();
        reject(
          new Error(
            `the server exited (${JSON.stringify(status)}) before the line awaited:\n${JSON.stringify(logs)}\n${other}`,
          ),
        );
      });
    });

  return {
    pid,
    logs,
    output: () => other,
    exited,
    waitForLine,
    closeOutput: () => child.stdout?.destroy(),
    async stop(signal = "SIGTERM") {
      child.kill(signal);
      return exited;
    },
    kill,
    descendants: () => descendantsOf(pid),
  };
}

function signalIgnoringGone(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** The live descendants of `pid`, from each process's parent in /proc/<pid>/stat. */
function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    // `pid (command) state ppid …`: the command may hold spaces and parentheses, so read after its last `)`.
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      visit(child);
    }
  };
  visit(pid);
  return found;
}

/** Launches the server (see launchServer) and resolves once it logged "listening". */
export async function spawnServer(options: ServerProcessOptions): Promise<ServerProcess> {
  const launched = launchServer(options);
  const listening = await launched.waitForLine(
    (line) => line.message === "listening" && typeof line.url === "string",
    options.startTimeoutMs ?? 30_000,
  );
  return { ...launched, url: listening.url as string };
}
