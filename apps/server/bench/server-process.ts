import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const serverDir = fileURLToPath(new URL("..", import.meta.url));
/** The compiled server the benchmarks start. */
export const serverMain = join(serverDir, "dist", "main.js");
const START_TIMEOUT_MS = 120_000;

/**
 * Starts the compiled server (`node dist/main.js`) with `env` on a free loopback port and answers once its
 * /readyz answers 200. Its log lines are read (and dropped), so a busy server never blocks on its stdout.
 */
export async function startServerProcess(
  env: NodeJS.ProcessEnv,
): Promise<{ server: ChildProcess; url: string; readyMs: number }> {
  const started = Date.now();
  const server = spawn(process.execPath, [...serverNodeArgs(), serverMain], {
    cwd: serverDir,
    env: { ...env, PORT: "0", HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const url = await listeningUrl(server);
    while (!(await ready(url))) {
      if (Date.now() - started > START_TIMEOUT_MS) throw new Error("/readyz never answered 200");
      await sleep(100);
    }
    return { server, url, readyMs: Date.now() - started };
  } catch (error) {
    await stopProcess(server);
    throw error;
  }
}

/** BENCH_SERVER_NODE_ARGS: options for the server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it. */
function serverNodeArgs(): string[] {
  return (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "");
}

/** The URL of the server's `listening` log line (it listens on a free port). */
function listeningUrl(server: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: server.stdout as NodeJS.ReadableStream });
    const timer = setTimeout(() => reject(new Error("the server did not start listening")), START_TIMEOUT_MS);
    server.once("exit", (code) => reject(new Error(`the server exited (code ${code}) before listening`)));
    lines.on("line", (line) => {
      let entry: { message?: string; url?: string } = {};
      try {
        entry = JSON.parse(line);
      } catch {} // not a log line
      if (entry.message === "listening" && entry.url !== undefined) {
        clearTimeout(timer);
        resolve(entry.url);
      }
    });
  });
}

async function ready(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/readyz`)).status === 200;
  } catch {
    return false;
  }
}

/** Stops a child process (SIGTERM) and waits for it to exit. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
