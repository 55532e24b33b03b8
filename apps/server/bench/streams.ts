/**
 * What an in-flight streamed turn costs the instance (docs/turn-cost.md, "Capacity"): printed, nothing asserted.
 *
 *   pnpm bench:streams        (at the root: builds the server first)
 *
 * Children of this process: a slow mock of the Responses API (node:http; each streamed call sends a text delta
 * every 50 ms for BENCH_STREAM_SECONDS (20) s, then the completed Response) and the compiled service
 * (`node dist/main.js`) on PGlite (a new temporary directory) and on Postgres (a new schema at
 * BENCH_POSTGRES_URL or TEST_DATABASE_URL, dropped after; skipped when neither is set). For each target, one
 * server runs rounds of BENCH_STREAMS (`300,2000`) concurrent streamed user turns, each of a session of its own,
 * read by clients of this process at BENCH_READ_BYTES_PER_SECOND (20,000) each.
 *
 * Printed for each round: the most streams that streamed at once; the server's RSS before it, its peak during it
 * and the growth per stream ((peak - before) / most at once); its RSS BENCH_SETTLE_SECONDS (60) after the round
 * (the memory given back); the latency a delta gained on its way through the service (every delta carries the
 * time the mock wrote it: a client's receipt minus that), p50/p99, beside this process's own event-loop delay
 * (a receipt is stamped late by that much); the server's event-loop lag p99 (its /metrics); its CPU; and
 * whether any stream lost or repeated a delta, or ended with a result whose text is not its deltas joined.
 * BENCH_TARGETS (`pglite,postgres`) picks the targets and BENCH_SERVER_NODE_ARGS passes options to the server's
 * node (e.g. `--heapsnapshot-signal=SIGUSR2`). Linux only (/proc).
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { startRole } from "./child-role.js";
import { completedResponse } from "./mock-response.js";
import { serverMain, startServerProcess, stopProcess } from "./server-process.js";

const ROUNDS = (process.env.BENCH_STREAMS ?? "300,2000").split(",").map(Number);
const DELTA_MS = 50;
const STREAM_SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? "20");
const DELTAS = Math.round((STREAM_SECONDS * 1_000) / DELTA_MS);
const READ_BYTES_PER_SECOND = Number(process.env.BENCH_READ_BYTES_PER_SECOND ?? "20000");
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? "60");
/**
 * Streams waiting for their answer's headers at once, at most, as a round opens: clients arrive as the server
 * admits them. Opened 100 every 50 ms, 652 of 2,000 were reset before they were answered.
 */
const OPENING = Number(process.env.BENCH_OPENING ?? "50");
const TARGETS = new Set((process.env.BENCH_TARGETS ?? "pglite,postgres").split(","));
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_DATABASE_URL;

/** Milliseconds since the epoch, to a fraction: the clock the mock stamps deltas with and clients read. */
function now(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * The slow provider: a streamed call gets `response.created`, then a delta every DELTA_MS, DELTAS of them, each
 * `<seq>@<time written> ` (about 20 characters: 8,000 a stream), then `response.completed` with the text.
 */
function runProvider(): void {
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      if (!(JSON.parse(body) as { stream?: boolean }).stream) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify(completedResponse("Done.")));
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      let sequence = 0;
      const send = (event: { type: string }) =>
        response.write(
          `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence++ })}\n\n`,
        );
      const started = { ...completedResponse(""), status: "in_progress", output: [] };
      send({ type: "response.created", response: started } as { type: string });
      const parts: string[] = [];
      const timer = setInterval(() => {
        if (parts.length === DELTAS) {
          clearInterval(timer);
          send({ type: "response.completed", response: completedResponse(parts.join("")) } as {
            type: string;
          });
          response.end();
          return;
        }
        const delta = `${parts.length}@${now().toFixed(2)} `;
        parts.push(delta);
        send({
          type: "response.output_text.delta",
          item_id: "msg_bench",
          output_index: 0,
          content_index: 0,
          delta,
          logprobs: [],
        } as { type: string });
      }, DELTA_MS);
      response.on("close", () => clearInterval(timer));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }));
  });
}

/** What one client saw of its stream. */
interface StreamOutcome {
  /** Deltas missing from the sequence the mock sent, and deltas seen more than once. */
  lost: number;
  repeated: number;
  /** Why the stream is not as it should be (status, no result, a result that is not the deltas joined). */
  failure?: string;
}

/**
 * One streamed user turn, read at READ_BYTES_PER_SECOND: each delta's latency goes to `latencies`, and
 * `onFirstDelta` is called once the turn streams.
 */
function streamTurn(
  url: string,
  sessionId: string,
  latencies: number[],
  on: { answered: () => void; firstDelta: () => void; ended: () => void },
): Promise<StreamOutcome> {
  const body = JSON.stringify({ sessionId, turnId: "turn-1", instruction: "Stream.", stream: true });
  return new Promise((resolve) => {
    const seen = new Uint8Array(DELTAS);
    const outcome: StreamOutcome = { lost: 0, repeated: 0 };
    const texts: string[] = [];
    let result: { successful?: boolean; result?: { primaryOutputText?: string } } | undefined;
    let pending = "";
    let bytes = 0;
    let started = 0;
    const onEvent = (block: string) => {
      let event = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data = line.slice(6);
      }
      if (event === "result") result = JSON.parse(data);
      if (event !== "output_text.delta") return;
      const { delta } = JSON.parse(data) as { delta: string };
      const received = now();
      if (texts.length === 0) on.firstDelta();
      texts.push(delta);
      const at = delta.indexOf("@");
      const seq = Number(delta.slice(0, at));
      latencies.push(received - Number(delta.slice(at + 1)));
      if (seen[seq]) outcome.repeated++;
      seen[seq] = 1;
    };
    const finish = (failure?: string) => {
      if (texts.length > 0) on.ended();
      outcome.lost = seen.reduce((missing, one) => missing + (one ? 0 : 1), 0);
      const text = texts.join("");
      if (failure) outcome.failure = failure;
      else if (!result?.successful) outcome.failure = `result ${JSON.stringify(result)?.slice(0, 200)}`;
      else if (result.result?.primaryOutputText !== text) outcome.failure = "the result is not the deltas";
      resolve(outcome);
    };
    const call = httpRequest(`${url}/v1/agent/execute`, {
      method: "POST",
      agent: false,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
    });
    call.on("error", (error) => {
      on.answered();
      finish(error.message);
    });
    call.on("response", (response) => {
      on.answered();
      if (response.statusCode !== 200) {
        response.resume();
        finish(`HTTP ${response.statusCode}`);
        return;
      }
      started = performance.now();
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        pending += chunk;
        let end = pending.indexOf("\n\n");
        while (end >= 0) {
          onEvent(pending.slice(0, end));
          pending = pending.slice(end + 2);
          end = pending.indexOf("\n\n");
        }
        // A slow reader: past its rate it stops reading until it is back on it.
        bytes += chunk.length;
        const ahead = (bytes / READ_BYTES_PER_SECOND) * 1_000 - (performance.now() - started);
        if (ahead > 0) {
          response.pause();
          setTimeout(() => response.resume(), ahead);
        }
      });
      response.on("end", () => finish());
      response.on("error", (error) => finish(error.message));
    });
    call.end(body);
  });
}

/** The server's resident memory (VmRSS), in MB. */
function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024;
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * From the server's /metrics (prom-client's): the event-loop lag p99 recorded since the last scrape, in ms (a
 * scrape resets it), and the JavaScript heap's size and use and the memory outside it, in MB.
 */
async function serverMetrics(url: string): Promise<{ lagMs: number; memory: string }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1]);
  const mb = (name: string) => (value(name) / 1_048_576).toFixed(0);
  return {
    lagMs: value("nodejs_eventloop_lag_p99_seconds") * 1_000,
    memory: `heap ${mb("nodejs_heap_size_used_bytes")} of ${mb("nodejs_heap_size_total_bytes")} MB, external ${mb("nodejs_external_memory_bytes")} MB`,
  };
}

function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

/**
 * One round of `streams` streamed turns against the server at `url` (process `pid`), opened as the server admits
 * them. The growth per stream is over the most that streamed at once (those past their first delta and not yet
 * ended), which falls short of `streams` when the server admits them more slowly than the first ones end.
 */
async function round(
  url: string,
  pid: number,
  streams: number,
  run: string,
  settleSeconds = SETTLE_SECONDS,
): Promise<string> {
  const before = rssMb(pid);
  const { memory: memoryBefore } = await serverMetrics(url);
  const cpuBefore = cpuSeconds(pid);
  const startedAt = performance.now();
  const ownLag = monitorEventLoopDelay();
  ownLag.enable();
  let peak = before;
  let streaming = 0;
  let mostStreaming = 0;
  // Read every 2 s (a read resets the server's lag record): the worst window's lag p99, and the heap as it was
  // with the most streams running.
  let lag = 0;
  let busiest = { streaming: 0, rss: before, memory: memoryBefore };
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 250);
  const metricsReader = setInterval(() => {
    const now = { streaming, rss: rssMb(pid) };
    void serverMetrics(url).then(
      ({ lagMs, memory }) => {
        lag = Math.max(lag, lagMs);
        if (now.streaming >= busiest.streaming) busiest = { ...now, memory };
      },
      () => undefined, // a server paused (for a heap snapshot, say) may miss a read
    );
  }, 2_000);
  const latencies: number[] = [];
  const outcomes: Promise<StreamOutcome>[] = [];
  let opening = 0;
  let opened: (() => void) | undefined;
  for (let i = 0; i < streams; i++) {
    while (opening >= OPENING) await new Promise<void>((resolve) => (opened = resolve));
    opening++;
    let waiting = true;
    const answered = () => {
      if (!waiting) return;
      waiting = false;
      opening--;
      opened?.();
    };
    outcomes.push(
      streamTurn(url, `${run}-${i}`, latencies, {
        answered,
        firstDelta: () => {
          streaming++;
          mostStreaming = Math.max(mostStreaming, streaming);
        },
        ended: () => {
          streaming--;
        },
      }),
    );
  }
  const done = await Promise.all(outcomes);
  clearInterval(sampler);
  clearInterval(metricsReader);
  ownLag.disable();
  const seconds = (performance.now() - startedAt) / 1_000;
  const { lagMs: lastLag, memory: memoryEnd } = await serverMetrics(url);
  lag = Math.max(lag, lastLag);
  const cpu = cpuSeconds(pid) - cpuBefore;
  const end = rssMb(pid);
  await sleep(settleSeconds * 1_000);
  const after = rssMb(pid);
  const { memory: memoryAfter } = await serverMetrics(url);
  const sorted = Float64Array.from(latencies).sort();
  const failures = done.filter((one) => one.failure !== undefined);
  const lost = done.reduce((sum, one) => sum + one.lost, 0);
  const repeated = done.reduce((sum, one) => sum + one.repeated, 0);
  const kb = ((peak - before) * 1_024) / mostStreaming;
  return [
    `${streams} streams (${seconds.toFixed(1)} s), at most ${mostStreaming} streaming at once: RSS ${before.toFixed(0)} MB before, ` +
      `${busiest.rss.toFixed(0)} MB with ${busiest.streaming} streaming, peak ${peak.toFixed(0)} MB (${kb.toFixed(0)} KB a stream), ` +
      `${end.toFixed(0)} MB at the end, ${after.toFixed(0)} MB ${settleSeconds} s later (${((after / before - 1) * 100).toFixed(0)}% over before)`,
    `  delta latency added p50 ${percentile(sorted, 0.5).toFixed(1)} ms, p99 ${percentile(sorted, 0.99).toFixed(1)} ms ` +
      `(${sorted.length} deltas; this process's own event-loop delay p99 ${(ownLag.percentile(99) / 1e6).toFixed(1)} ms); ` +
      `server event-loop lag p99 ${lag.toFixed(1)} ms (worst 2 s); server CPU ${((cpu / seconds) * 100).toFixed(0)}% of a core`,
    `  ${streams - failures.length} of ${streams} streams complete; deltas lost ${lost}, repeated ${repeated}` +
      (failures.length > 0 ? `; first failure: ${failures[0]?.failure}` : ""),
    `  before: ${memoryBefore}; with ${busiest.streaming} streaming: ${busiest.memory}; at the end: ${memoryEnd}; ` +
      `${settleSeconds} s later: ${memoryAfter}`,
  ].join("\n");
}

async function main(): Promise<void> {
  if (!existsSync(serverMain)) throw new Error(`No ${serverMain}: run \`pnpm bench:streams\` at the root.`);
  const children: ChildProcess[] = [];
  const directory = await mkdtemp(join(tmpdir(), "aptix-bench-streams-"));
  const schema = `aptix_bench_${randomBytes(4).toString("hex")}`;
  const admin = postgresUrl ? postgres(postgresUrl, { max: 1, onnotice: () => {} }) : undefined;
  try {
    const provider = await startRole(fileURLToPath(import.meta.url), "provider", process.env);
    children.push(provider.child);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      OPENAI_BASE_URL: `${provider.url}/v1`,
      OPENAI_API_KEY: "sk-bench",
      APTIX_OPENAI_MAX_RETRIES: "0",
      // One principal runs every stream: lift its per-principal limits.
      APTIX_RATE_LIMIT_RPM: "1000000",
      APTIX_MAX_RUNNING_TURNS: "100000",
    };
    // Traces off, whatever OTEL_* this shell has.
    for (const name of [
      "APTIX_API_KEYS",
      "APTIX_CONFIG",
      "OTEL_EXPORTER_OTLP_ENDPOINT",
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
      "OTEL_TRACES_EXPORTER",
    ])
      delete env[name];
    const targets: Array<{ name: string; env: NodeJS.ProcessEnv }> = [];
    if (TARGETS.has("pglite"))
      targets.push({ name: "PGlite", env: { ...env, DATABASE_URL: join(directory, "db") } });
    if (TARGETS.has("postgres") && postgresUrl) {
      targets.push({
        name: "Postgres",
        env: { ...env, DATABASE_URL: postgresUrl, APTIX_DATABASE_SCHEMA: schema },
      });
    } else if (TARGETS.has("postgres")) {
      console.log("Postgres: skipped (set BENCH_POSTGRES_URL or TEST_DATABASE_URL)");
    }
    console.log(
      `Streams of ${DELTAS} deltas every ${DELTA_MS} ms, read at ${READ_BYTES_PER_SECOND} bytes/s; rounds of ${ROUNDS.join(", ")}`,
    );
    for (const target of targets) {
      const { server, url } = await startServerProcess(target.env);
      children.push(server);
      const pid = server.pid ?? Number.NaN;
      try {
        // A short round first, so the rounds measure a warmed-up server, not V8 compiling its paths.
        await round(url, pid, 20, "warm-up", 0);
        console.log(`\nservice on ${target.name} (pid ${pid})`);
        for (const [index, streams] of ROUNDS.entries()) {
          console.log(await round(url, pid, streams, `round-${index}`));
        }
      } finally {
        await stopProcess(server);
      }
    }
  } finally {
    await Promise.all(children.map(stopProcess));
    await rm(directory, { recursive: true, force: true });
    if (admin) {
      await admin.unsafe(`drop schema if exists "${schema}" cascade`);
      await admin.end({ timeout: 5 });
    }
  }
}

if (process.argv[2] === "provider") runProvider();
else await main();
