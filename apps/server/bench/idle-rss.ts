/**
 * Idle memory of the compiled server on each kind of database: starts `node dist/main.js`, waits for /readyz,
 * idles, and prints the process's VmRSS (and its peak, VmHWM) from /proc. A measurement to read, not a test:
 * nothing is asserted. Linux only.
 *
 *   pnpm turbo run build --filter=@aptix/server...
 *   pnpm --filter @aptix/server bench:rss [disk] [disk-reopened] [memory] [postgres]
 *
 * - disk: PGlite in a new temporary directory (the first start of the default `./.aptix/db`)
 * - disk-reopened: the same directory started again (every later start)
 * - memory: `memory://`
 * - postgres: the server at BENCH_POSTGRES_URL or TEST_DATABASE_URL (skipped when neither is set)
 *
 * IDLE_SECONDS (default 5) sets the idle time. Other variables reach the server, e.g.
 * `APTIX_PGLITE_SHARED_BUFFERS=128MB` for Postgres's default.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { serverMain as main, startServerProcess, stopProcess } from "./server-process.js";

const KINDS = ["disk", "disk-reopened", "memory", "postgres"] as const;
type Kind = (typeof KINDS)[number];

const idleMs = Number(process.env.IDLE_SECONDS ?? "5") * 1_000;
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_DATABASE_URL;

interface Sample {
  kind: Kind;
  readyMs: number;
  rssMb: number;
  peakMb: number;
}

async function measure(kind: Kind, databaseUrl: string): Promise<Sample> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl };
  delete env.APTIX_API_KEYS;
  const { server, readyMs } = await startServerProcess(env);
  try {
    await sleep(idleMs);
    const status = await readFile(`/proc/${server.pid}/status`, "utf8");
    return {
      kind,
      readyMs,
      rssMb: kilobytes(status, "VmRSS") / 1024,
      peakMb: kilobytes(status, "VmHWM") / 1024,
    };
  } finally {
    await stopProcess(server);
  }
}

function databaseUrl(kind: Kind, directory: string): string {
  switch (kind) {
    case "memory":
      return "memory://";
    case "postgres":
      return postgresUrl ?? "";
    default:
      return join(directory, "db"); // disk-reopened starts on what disk (or a first start of its own) created
  }
}

function kilobytes(status: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  if (match?.[1] === undefined) throw new Error(`no ${field} in /proc/<pid>/status`);
  return Number(match[1]);
}

const requested = process.argv.slice(2);
const unknown = requested.filter((kind) => !(KINDS as readonly string[]).includes(kind));
if (unknown.length > 0) throw new Error(`Unknown kind(s) ${unknown.join(", ")}: use ${KINDS.join(", ")}.`);
if (process.platform !== "linux") throw new Error("Reads /proc/<pid>/status: Linux only.");
if (!existsSync(main))
  throw new Error(`No ${main}: build first (pnpm turbo run build --filter=@aptix/server...).`);

const kinds = requested.length > 0 ? (requested as Kind[]) : [...KINDS];
const directory = await mkdtemp(join(tmpdir(), "aptix-idle-rss-"));
const samples: Sample[] = [];
try {
  for (const kind of kinds) {
    if (kind === "postgres" && postgresUrl === undefined) {
      console.error("postgres: skipped (set BENCH_POSTGRES_URL or TEST_DATABASE_URL)");
      continue;
    }
    const url = databaseUrl(kind, directory);
    if (kind === "disk") await rm(url, { recursive: true, force: true });
    if (kind === "disk-reopened" && !existsSync(url)) await measure("disk", url);
    samples.push(await measure(kind, url));
  }
} finally {
  await rm(directory, { recursive: true, force: true });
}

console.log(`idle RSS of node dist/main.js, ${idleMs / 1_000} s after /readyz answered 200`);
console.table(
  samples.map(({ kind, readyMs, rssMb, peakMb }) => ({
    database: kind,
    "ready (ms)": readyMs,
    "VmRSS (MB)": Math.round(rssMb),
    "VmHWM (MB)": Math.round(peakMb),
  })),
);
