import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The compiled binary, as `bin.aptix` names it. */
export const APTIX_BIN = fileURLToPath(new URL("../../dist/main.js", import.meta.url));

export interface AptixRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The last line of stdout, parsed (`--json`). */
  json(): Record<string, unknown>;
}

export interface AptixRunOptions {
  cwd: string;
  /** Written to stdin, which is then closed. */
  input?: string;
  env?: Record<string, string>;
}

/** Runs `node dist/main.js <args>` as a child process (asynchronously: the server may live in this process). */
export function runAptix(args: readonly string[], options: AptixRunOptions): Promise<AptixRun> {
  return runProcess(process.execPath, [APTIX_BIN, ...args], options);
}

/** Runs a command as a child process, `NO_COLOR` set, and collects what it prints. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: AptixRunOptions,
): Promise<AptixRun> {
  return startProcess(command, args, options).finished;
}

/**
 * Starts `node dist/main.js <args>` as a child process and answers it (to signal it, say) with what it will have
 * printed once it ends.
 */
export function startAptix(
  args: readonly string[],
  options: AptixRunOptions,
): { child: ChildProcess; stderr: () => string; finished: Promise<AptixRun> } {
  return startProcess(process.execPath, [APTIX_BIN, ...args], options);
}

function startProcess(command: string, args: readonly string[], options: AptixRunOptions) {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  child.stdin.end(options.input ?? "");
  const finished = new Promise<AptixRun>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({
        code,
        stdout,
        stderr,
        json() {
          const last = stdout.trimEnd().split("\n").at(-1) ?? "";
          try {
            return JSON.parse(last) as Record<string, unknown>;
          } catch {
            throw new Error(
              `the last line of stdout is not JSON: ${JSON.stringify(last)}\nstderr: ${stderr}`,
            );
          }
        },
      }),
    );
  });
  return { child, stderr: () => stderr, finished };
}
