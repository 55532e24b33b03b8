// `pnpm start` and `pnpm demo` (`--demo`: the server with APTIX_DEMO=1): builds the server (saying what it builds,
// with the time since start), then runs `node apps/server/dist/main.js` and stays its parent until it stops. pnpm runs this with `exec`, so it is pnpm's
// own child: pnpm's SIGTERM (what a process manager sends) reaches it, and it forwards the stop to the server and
// waits for it, so no server outlives `pnpm start` and a clean stop ends with the server's exit code, 0.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const started = performance.now();
/** `[+12.3s]`: the time since `pnpm start` began, which a first start spends mostly building. */
const since = () => `[+${((performance.now() - started) / 1000).toFixed(1)}s]`;
const say = (line) => process.stderr.write(`${since()} ${line}\n`);

/**
 * Signals closer together than this are one stop: a Ctrl-C in a terminal reaches this process twice, from the
 * terminal and again from pnpm, which forwards it. A later one is a person who does not want to wait.
 */
const SAME_STOP_MS = 1_000;
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];

/** The running step (the build, then the server), which a stop is forwarded to. */
let child;
/** When the first stop signal came; none yet while undefined. */
let stoppedAt;
for (const signal of STOP_SIGNALS) {
  process.on(signal, () => {
    const now = performance.now();
    if (stoppedAt !== undefined && now - stoppedAt < SAME_STOP_MS) return;
    stoppedAt ??= now;
    child?.kill(signal);
  });
}
// pnpm killed outright (SIGKILL, a closed terminal) cannot forward anything: this process is handed to another
// parent then, and stops the server itself.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent && stoppedAt === undefined) process.kill(process.pid, "SIGTERM");
}, 1_000).unref();

/** Runs one step to its end: its exit code, or 128 + the signal's number when a signal ended it. */
function run(command, args, options) {
  return new Promise((resolve, reject) => {
    child = spawn(command, args, { cwd: root, ...options });
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      child = undefined;
      resolve(code ?? 128 + constants.signals[signal]);
    });
  });
}

// Built packages come from turbo's cache: a start with nothing changed only checks them. Each package built is
// told as it starts (a first start builds every package the server needs, which takes minutes on a busy machine).
say("building the server and the packages it needs (turbo's cache skips what has not changed)");
const turbo = fileURLToPath(new URL("../node_modules/.bin/turbo", import.meta.url));
const building = run(turbo, ["run", "build", "--filter=@aptix/server", "--output-logs=new-only"], {
  stdio: ["ignore", "pipe", "inherit"],
});
let built = 0;
let cached = 0;
for await (const line of createInterface({ input: child.stdout })) {
  const task = /^(\S+):build: cache (miss|hit)/.exec(line);
  if (task?.[2] === "miss") {
    built += 1;
    say(`building ${task[1]}`);
  } else if (task) cached += 1;
  // What a build prints beyond turbo's own lines is an error of it.
  else if (/^\S+:build: (?!>|$)/.test(line)) process.stderr.write(`${line}\n`);
  else if (/ERROR|failed/i.test(line)) process.stderr.write(`${line}\n`);
}
const buildCode = await building;
// Stopped while building: nothing failed, and there is no server to start.
if (stoppedAt !== undefined) process.exit(0);
if (buildCode !== 0) {
  say(`the build failed (exit code ${buildCode})`);
  process.exit(buildCode);
}
say(`built ${built} package(s), ${cached} unchanged`);

// Its own process group: a terminal's Ctrl-C reaches the server only through this process, once.
const demo = process.argv.includes("--demo") ? { APTIX_DEMO: "1" } : {};
const code = await run(process.execPath, ["apps/server/dist/main.js"], {
  stdio: "inherit",
  detached: true,
  env: { ...process.env, ...demo },
});
process.exit(code);
