/**
 * The cost of a turn end to end (docs/turn-cost.md): one process tree, one run, printed, nothing asserted.
 *
 *   pnpm bench:e2e        (at the root: builds the server first)
 *
 * Children of this process: a lean mock of the Responses API (node:http answering one fixed Response at once),
 * a bare Hono + `openai` SDK peer (one route: `responses.create`, then the answer's text), and the compiled
 * service (`node dist/main.js`) on PGlite (a new temporary directory) and on Postgres (a new schema at
 * BENCH_POSTGRES_URL or TEST_DATABASE_URL, dropped after; skipped when neither is set), both with
 * OPENAI_BASE_URL at the mock. For each target, BENCH_CLIENTS (16) clients send requests back to back for
 * BENCH_SECONDS (10) after BENCH_WARMUP_SECONDS (10) of warm-up; the service's clients each run turns of a
 * session of their own. BENCH_TARGETS (`pglite,postgres`) picks the service's targets, BENCH_SERVER_NODE_ARGS
 * passes options to the service's node (e.g. to profile one of them), and BENCH_TRACES=1 has the service export
 * its traces to a collector on loopback (another child) to measure their cost.
 * Printed: turns/s, against the peer, with latency p50/p99 and the CPU each process spent per turn (Linux).
 * Then, for each service, one client alone, turn after turn, alternating between it and the peer: latency
 * p50/p99 and the service's overhead over the peer (an SDK call to the same mock behind the same kind of HTTP
 * server), read in the same seconds. Under load, latency is queueing (clients / throughput), so overhead is read
 * unloaded. Then turn 1 against turn BENCH_LONG_TURNS (1,000) of one session on Postgres: rows read by Postgres's
 * statistics, and time (`longSession`).
 *
 * Here rather than in apps/test-harness: it starts the compiled server as `pnpm start` runs it and reuses the
 * server's own dependencies (hono, @hono/node-server) for the peer.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import OpenAI from "openai";
import postgres from "postgres";
import { startRole } from "./child-role.js";
import { completedResponse, MODEL } from "./mock-response.js";
import { serverMain, startServerProcess, stopProcess } from "./server-process.js";

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? "16");
const SECONDS = Number(process.env.BENCH_SECONDS ?? "10");
/** Before each loaded run: long enough for V8 to have compiled the hot path (after 2 s it still spends a fifth of
 * the service's CPU compiling), so the run measures a server in its steady state. */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? "10");
/** Before the one-client runs, on a server the loaded run warmed up already. */
const ALONE_WARMUP_SECONDS = 2;
const LONG_TURNS = Number(process.env.BENCH_LONG_TURNS ?? "1000");
/**
 * Turns at each end of the long session. Their median time is compared, since one turn's time, or the mean of
 * a few milliseconds-long turns, moves by more than the 10% the comparison is about.
 */
const WINDOW = 100;
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_DATABASE_URL;
/**
 * BENCH_TRACES=1: the service exports its traces with OTLP to a collector on loopback (another child, which
 * reads and drops them); otherwise the service runs with traces off, whatever OTEL_* this shell has.
 */
const TRACES = process.env.BENCH_TRACES === "1";
/** The variables that would turn the service's traces on. */
const OTEL_SWITCHES = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_TRACES_EXPORTER",
];
/** Which of the service's targets run (`pglite`, `postgres`, comma-separated): one alone, to profile or compare it. */
const TARGETS = new Set((process.env.BENCH_TARGETS ?? "pglite,postgres").split(","));

/** The one Response the mock answers every request with. */
const RESPONSE = JSON.stringify(completedResponse("Done."));

/** A child's role: it listens on a free port and prints `{"url": …}` once. */
async function runRole(role: string): Promise<void> {
  // The collector stands in for an OpenTelemetry Collector's OTLP/HTTP port: it reads each export and answers 200.
  if (role === "mock" || role === "collector") {
    const body = role === "mock" ? RESPONSE : "{}";
    const server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(body);
      });
    });
    server.keepAliveTimeout = 60_000;
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }));
    });
    return;
  }
  if (role === "peer") {
    const client = new OpenAI({ maxRetries: 0 });
    const app = new Hono().post("/turn", async (c) => {
      const { instruction } = await c.req.json<{ instruction: string }>();
      const response = await client.responses.create({ model: MODEL, input: instruction });
      return c.json({ text: response.output_text });
    });
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
      console.log(JSON.stringify({ url: `http://127.0.0.1:${info.port}` }));
    });
    process.on("SIGTERM", () => server.close());
    return;
  }
  throw new Error(`Unknown role ${role}: use mock, collector or peer.`);
}

interface Load {
  turnsPerSecond: number;
  p50: number;
  p99: number;
  failures: number;
  /** CPU milliseconds per turn, by process (Linux only). */
  cpu: string;
}

/**
 * `clients` clients sending `send(client)` back to back: WARMUP_SECONDS of warm-up, then SECONDS measured. A
 * request answering anything but 200 counts as a failure (and its time is not kept). `meter` starts counting CPU
 * when the measured part starts.
 */
async function load(
  clients: number,
  send: (client: number) => Promise<Response>,
  meter: () => CpuMeter,
): Promise<Load> {
  const latencies: number[] = [];
  let failures = 0;
  let measuring = false;
  let stopAt = Date.now() + WARMUP_SECONDS * 1_000;
  const client = async (id: number) => {
    while (Date.now() < stopAt) {
      const ms = await timed(() => send(id));
      if (!measuring) continue;
      if (ms !== undefined) latencies.push(ms);
      else failures++;
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, id) => client(id)));
  measuring = true;
  const cpu = meter();
  const started = performance.now();
  stopAt = Date.now() + SECONDS * 1_000;
  await Promise.all(Array.from({ length: clients }, (_, id) => client(id)));
  const elapsed = (performance.now() - started) / 1_000;
  latencies.sort((a, b) => a - b);
  return {
    turnsPerSecond: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    failures,
    cpu: cpu.stop(latencies.length + failures),
  };
}

/** How long `send` took to answer in full, or undefined when it answered anything but 200. */
async function timed(send: () => Promise<Response>): Promise<number | undefined> {
  const started = performance.now();
  const response = await send();
  await response.arrayBuffer();
  const ms = performance.now() - started;
  return response.status === 200 ? ms : undefined;
}

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

interface Latency {
  p50: number;
  p99: number;
  failures: number;
}

/**
 * One client, turn after turn, alternating between the peer and the service (ALONE_WARMUP_SECONDS of it, then
 * SECONDS measured): the latency of each, read in the same seconds. Measured minutes apart, the two moved with
 * the machine's speed by more than the overhead they are compared for.
 */
async function alongside(
  peer: () => Promise<Response>,
  service: () => Promise<Response>,
): Promise<{ peer: Latency; service: Latency }> {
  const times = { peer: [] as number[], service: [] as number[] };
  const failures = { peer: 0, service: 0 };
  const turn = async (who: "peer" | "service", measuring: boolean) => {
    const ms = await timed(who === "peer" ? peer : service);
    if (!measuring) return;
    if (ms !== undefined) times[who].push(ms);
    else failures[who]++;
  };
  for (const [seconds, measuring] of [
    [ALONE_WARMUP_SECONDS, false],
    [SECONDS, true],
  ] as const) {
    const stopAt = Date.now() + seconds * 1_000;
    while (Date.now() < stopAt) {
      await turn("peer", measuring);
      await turn("service", measuring);
    }
  }
  const latency = (who: "peer" | "service"): Latency => {
    const sorted = times[who].sort((a, b) => a - b);
    return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), failures: failures[who] };
  };
  return { peer: latency("peer"), service: latency("service") };
}

/** CPU seconds (user + system) a process has used so far, from /proc; NaN where there is no /proc. */
function cpuSecondsOf(pid: number): number {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds used so far by every `postgres` process on this machine (the server and its backends). */
function postgresCpuSeconds(): number {
  let total = 0;
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres")
          total += cpuSecondsOf(Number(entry));
      } catch {} // the process ended meanwhile
    }
  } catch {
    return Number.NaN;
  }
  return total;
}

/** What a measured load cost in CPU, per turn: the process serving it, Postgres, the mock and this process. */
interface CpuMeter {
  stop(turns: number): string;
}

function cpuMeter(servingPid: number, mockPid: number): CpuMeter {
  const start = {
    serving: cpuSecondsOf(servingPid),
    postgres: postgresCpuSeconds(),
    mock: cpuSecondsOf(mockPid),
    clients: process.cpuUsage(),
  };
  return {
    stop(turns) {
      const perTurn = (seconds: number) => `${((seconds * 1_000) / turns).toFixed(2)}`;
      const clients = process.cpuUsage(start.clients);
      return [
        `serving ${perTurn(cpuSecondsOf(servingPid) - start.serving)}`,
        `postgres ${perTurn(postgresCpuSeconds() - start.postgres)}`,
        `mock ${perTurn(cpuSecondsOf(mockPid) - start.mock)}`,
        `clients ${perTurn((clients.user + clients.system) / 1e6)}`,
      ].join(", ");
    },
  };
}

function postJson(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** A user turn of client `client`'s own session. */
function turnOf(serviceUrl: string, run: string) {
  const turns = new Map<number, number>();
  return (client: number) => {
    const n = (turns.get(client) ?? 0) + 1;
    turns.set(client, n);
    return postJson(`${serviceUrl}/v1/agent/execute`, {
      sessionId: `${run}-${client}`,
      turnId: `turn-${n}`,
      instruction: "Say done.",
    });
  };
}

/**
 * A warning when Postgres's catalogs hold many dead rows (a test suite creating and dropping schemas, with
 * autovacuum off, leaves them): every new connection and plan then reads them, and the service on Postgres
 * measured about a quarter slower here until `VACUUM pg_catalog.pg_attribute, pg_catalog.pg_class, …` ran.
 */
async function catalogBloat(sql: postgres.Sql): Promise<string | undefined> {
  const rows = await sql`
    select relname, n_dead_tup::bigint as dead, n_live_tup::bigint as live from pg_stat_sys_tables
    where schemaname = 'pg_catalog' and n_dead_tup > 10000 and n_dead_tup > 10 * n_live_tup`;
  if (rows.length === 0) return undefined;
  const tables = rows.map((row) => `${row.relname} (${row.dead} dead rows, ${row.live} live)`).join(", ");
  return `Warning: Postgres's catalogs hold many dead rows, which slows the service on Postgres: ${tables}. VACUUM them first.`;
}

/** Rows Postgres read in `schema` so far (seq_tup_read + idx_tup_fetch), once every backend reported them. */
async function rowsRead(sql: postgres.Sql, schema: string): Promise<number> {
  // A busy backend reports its statistics at most once a second, and an idle one within 10 s.
  await sleep(11_000);
  await sql`select pg_stat_clear_snapshot()`;
  const [row] = await sql`
    select coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0)::bigint as n
    from pg_stat_user_tables where schemaname = ${schema} and relname <> '__drizzle_migrations'`;
  return Number(row?.n ?? 0);
}

/**
 * Turn 1 against turn LONG_TURNS of one session, in rows read (the mean over WINDOW turns at each end) and in
 * time. Time is compared side by side: the session's next WINDOW turns, each followed by a turn of a new
 * session, against that new session's turns 1-WINDOW. The two ends of one session run minutes apart, long
 * enough for the machine's speed and Postgres's background work (checkpoints) to move the median by more than
 * the 10% the comparison is about; interleaved, both sides meet the same conditions. (Their sequential medians
 * are printed too.)
 */
async function longSession(serviceUrl: string, sql: postgres.Sql, schema: string): Promise<string> {
  const turns = new Map<string, number>();
  const turn = async (sessionId: string) => {
    const n = (turns.get(sessionId) ?? 0) + 1;
    turns.set(sessionId, n);
    const started = performance.now();
    const response = await postJson(`${serviceUrl}/v1/agent/execute`, {
      sessionId,
      turnId: `turn-${n}`,
      instruction: "Say done.",
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`turn ${n} of ${sessionId} answered ${response.status}`);
    return performance.now() - started;
  };
  const median = (times: number[]) =>
    percentile(
      [...times].sort((a, b) => a - b),
      0.5,
    );
  const windowOf = async () => {
    const before = await rowsRead(sql, schema);
    const times: number[] = [];
    for (let i = 0; i < WINDOW; i++) times.push(await turn("long-session"));
    return { ms: median(times), rows: ((await rowsRead(sql, schema)) - before) / WINDOW };
  };
  const first = await windowOf();
  while ((turns.get("long-session") ?? 0) < LONG_TURNS - WINDOW) await turn("long-session");
  const last = await windowOf();
  const long: number[] = [];
  const fresh: number[] = [];
  for (let i = 0; i < WINDOW; i++) {
    long.push(await turn("long-session"));
    fresh.push(await turn("new-session"));
  }
  const n = LONG_TURNS;
  return [
    `One session on Postgres, rows read per turn: turns 1-${WINDOW} ${first.rows.toFixed(1)}, turns ${n - WINDOW + 1}-${n} ` +
      `${last.rows.toFixed(1)} (${(last.rows / first.rows).toFixed(2)}x).`,
    `Median time: turns ${n + 1}-${n + WINDOW} ${median(long).toFixed(2)} ms against a new session's turns 1-${WINDOW} ` +
      `run between them ${median(fresh).toFixed(2)} ms (${(median(long) / median(fresh)).toFixed(2)}x); one after the ` +
      `other, turns 1-${WINDOW} ${first.ms.toFixed(2)} ms and ${n - WINDOW + 1}-${n} ${last.ms.toFixed(2)} ms ` +
      `(${(last.ms / first.ms).toFixed(2)}x).`,
  ].join("\n");
}

function throughputRow(name: string, result: Load, peer?: Load): string {
  return [
    name.padEnd(22),
    `${result.turnsPerSecond.toFixed(0).padStart(6)}/s`,
    peer ? `${(result.turnsPerSecond / peer.turnsPerSecond).toFixed(2).padStart(5)}x` : "      ",
    `p50 ${result.p50.toFixed(2).padStart(6)} ms`,
    `p99 ${result.p99.toFixed(2).padStart(6)} ms`,
    `CPU ms/turn: ${result.cpu}`,
    result.failures > 0 ? `(${result.failures} failed)` : "",
  ]
    .join("  ")
    .trimEnd();
}

function latencyRow(name: string, { peer, service }: { peer: Latency; service: Latency }): string {
  const ms = (value: number) => `${value.toFixed(2).padStart(6)} ms`;
  return [
    name.padEnd(22),
    `p50 ${ms(service.p50)}  p99 ${ms(service.p99)}`,
    `peer p50 ${ms(peer.p50)}  p99 ${ms(peer.p99)}`,
    `overhead p50 ${ms(service.p50 - peer.p50)}, p99 ${ms(service.p99 - peer.p99)}`,
    service.failures + peer.failures > 0 ? `(${service.failures} + ${peer.failures} failed)` : "",
  ]
    .join("  ")
    .trimEnd();
}

async function main(): Promise<void> {
  if (!existsSync(serverMain)) throw new Error(`No ${serverMain}: run \`pnpm bench:e2e\` at the root.`);
  const children: ChildProcess[] = [];
  const directory = await mkdtemp(join(tmpdir(), "aptix-bench-e2e-"));
  const schema = `aptix_bench_${randomBytes(4).toString("hex")}`;
  const admin = postgresUrl ? postgres(postgresUrl, { max: 1, onnotice: () => {} }) : undefined;
  try {
    const mock = await startRole(fileURLToPath(import.meta.url), "mock", process.env);
    children.push(mock.child);
    const llmEnv: NodeJS.ProcessEnv = {
      ...process.env,
      OPENAI_BASE_URL: `${mock.url}/v1`,
      OPENAI_API_KEY: "sk-bench",
      APTIX_OPENAI_MAX_RETRIES: "0",
      // The bench's clients are one principal sending thousands of turns a minute: lift the per-principal limits
      // (a limit still costs its check on every request, so the figures include it).
      APTIX_RATE_LIMIT_RPM: "1000000",
      APTIX_MAX_RUNNING_TURNS: "100000",
    };
    delete llmEnv.APTIX_API_KEYS;
    delete llmEnv.APTIX_CONFIG;
    for (const name of OTEL_SWITCHES) delete llmEnv[name];
    if (TRACES) {
      const collector = await startRole(fileURLToPath(import.meta.url), "collector", process.env);
      children.push(collector.child);
      llmEnv.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url;
      console.log(`Traces exported with OTLP to a collector at ${collector.url}`);
    }
    const peer = await startRole(fileURLToPath(import.meta.url), "peer", llmEnv);
    children.push(peer.child);

    // The meter counts the CPU of the process serving `send` (`pid`), beside Postgres, the mock and this one.
    const measure = (clients: number, send: (client: number) => Promise<Response>, pid: number | undefined) =>
      load(clients, send, () => cpuMeter(pid ?? Number.NaN, mock.child.pid ?? Number.NaN));
    const toMock = () => postJson(`${mock.url}/v1/responses`, { model: MODEL, input: "Say done." });
    const toPeer = () => postJson(`${peer.url}/turn`, { instruction: "Say done." });

    const bloat = admin && (await catalogBloat(admin));
    if (bloat) console.log(bloat);
    console.log(`${CLIENTS} clients, ${SECONDS} s per target after ${WARMUP_SECONDS} s of warm-up\n`);
    console.log(throughputRow("mock, direct", await measure(CLIENTS, toMock, mock.child.pid)));
    const bare = await measure(CLIENTS, toPeer, peer.child.pid);
    console.log(throughputRow("Hono + openai peer", bare));
    const latencies: string[] = [];

    const targets: Array<{ name: string; env: NodeJS.ProcessEnv }> = [];
    if (TARGETS.has("pglite")) {
      targets.push({ name: "service on PGlite", env: { ...llmEnv, DATABASE_URL: join(directory, "db") } });
    }
    if (TARGETS.has("postgres") && postgresUrl) {
      targets.push({
        name: "service on Postgres",
        env: { ...llmEnv, DATABASE_URL: postgresUrl, APTIX_DATABASE_SCHEMA: schema },
      });
    } else if (TARGETS.has("postgres")) {
      console.log("service on Postgres: skipped (set BENCH_POSTGRES_URL or TEST_DATABASE_URL)");
    }
    let longSessionLine: string | undefined;
    for (const target of targets) {
      const { server, url } = await startServerProcess(target.env);
      children.push(server);
      try {
        console.log(
          throughputRow(target.name, await measure(CLIENTS, turnOf(url, "bench"), server.pid), bare),
        );
        const alone = turnOf(url, "alone");
        latencies.push(latencyRow(target.name, await alongside(toPeer, () => alone(0))));
        // On the server the runs above warmed up: the first turns of a cold one are slower than any later.
        if (admin && target.env.APTIX_DATABASE_SCHEMA === schema) {
          longSessionLine = await longSession(url, admin, schema);
        }
      } finally {
        await stopProcess(server);
      }
    }
    console.log(
      "\nOne client, turn after turn, alternating between the service and the peer (overhead: the service's latency over the peer's):",
    );
    for (const line of latencies) console.log(line);
    if (longSessionLine !== undefined) console.log(`\n${longSessionLine}`);
  } finally {
    await Promise.all(children.map(stopProcess));
    await rm(directory, { recursive: true, force: true });
    if (admin) {
      await admin.unsafe(`drop schema if exists "${schema}" cascade`);
      await admin.end({ timeout: 5 });
    }
  }
}

const role = process.argv[2];
if (role === undefined) await main();
else await runRole(role);
