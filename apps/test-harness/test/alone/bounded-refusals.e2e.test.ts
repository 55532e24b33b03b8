import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ServerProcess, spawnServer } from "../../src/e2e/index.js";

// A child process compiles the server with tsx and opens PGlite at start-up: on two busy cores that has taken
// over 30 s (as in server-process.e2e.test.ts).
const startTimeoutMs = 90_000;
vi.setConfig({ testTimeout: startTimeoutMs + 60_000, hookTimeout: startTimeoutMs + 30_000 });

const MiB = 1024 * 1024;
const KEY = "alice-key-0123456789";
/** The bound docs/security.md sets for a refusal's cost to the others: `/healthz` answers within 1 s meanwhile. */
const HEALTHZ_BOUND_MS = 1_000;

interface Sent {
  status: number;
  /** The raw answer. */
  body: string;
  /** Bytes written before the answer's head arrived. */
  writtenBeforeAnswer: number;
  /** Whether the whole body was written before the answer's head arrived. */
  finishedBeforeAnswer: boolean;
}

/** `bytes` cut in 1 MiB chunks. */
const chunksOf = (bytes: Buffer) =>
  Array.from({ length: Math.ceil(bytes.length / MiB) }, (_, index) =>
    bytes.subarray(index * MiB, (index + 1) * MiB),
  );

/** `count` MiB of spaces, one chunk repeated, so a large body costs the test no memory. */
const spaces = (count: number) => Array<Buffer>(count).fill(Buffer.alloc(MiB, 0x20));

/**
 * Sends `chunks` chunked (no Content-Length), waiting for the socket to drain as a client does; stops sending
 * once the answer arrives.
 */
function send(url: string, method: string, path: string, chunks: readonly Buffer[]): Promise<Sent> {
  const total = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  return new Promise((resolve, reject) => {
    let written = 0;
    let next = 0;
    let answered = false;
    const outgoing = request(
      `${url}${path}`,
      { method, headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` } },
      async (response) => {
        answered = true;
        const writtenBeforeAnswer = written;
        const finishedBeforeAnswer = written === total;
        let text = "";
        for await (const chunk of response) text += chunk;
        resolve({ status: response.statusCode ?? 0, body: text, writtenBeforeAnswer, finishedBeforeAnswer });
        outgoing.destroy();
      },
    );
    outgoing.on("error", (error) => {
      if (!answered) reject(error);
    });
    const pump = () => {
      while (!answered && next < chunks.length) {
        const chunk = chunks[next++] as Buffer;
        written += chunk.length;
        if (!outgoing.write(chunk)) return void outgoing.once("drain", pump);
      }
      if (!answered) outgoing.end();
    };
    pump();
  });
}

/**
 * Asks `/healthz` again and again while `work` runs, and answers the slowest round trip with `work`'s result.
 * The next probe starts as the last one answers, so any stretch of a blocked event loop shows in one of them.
 */
async function whileProbing<T>(
  url: string,
  work: Promise<T>,
): Promise<{ result: T; slowestHealthzMs: number }> {
  let done = false;
  let slowest = 0;
  const probes = (async () => {
    while (!done) {
      const started = performance.now();
      const response = await fetch(`${url}/healthz`);
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      slowest = Math.max(slowest, performance.now() - started);
    }
  })();
  const result = await work.finally(() => {
    done = true;
  });
  await probes;
  return { result, slowestHealthzMs: slowest };
}

/** `{"k0":0,"k1":0,…}` of about `bytes` bytes: the hostile body of issue 27, every key unknown. */
function unknownKeys(bytes: number): Buffer {
  const parts: string[] = [];
  let size = 2;
  for (let index = 0; size < bytes; index++) {
    const part = `"k${index}":0`;
    parts.push(part);
    size += part.length + 1;
  }
  return Buffer.from(`{${parts.join(",")}}`);
}

describe("bounded refusals, against the server as a child process", () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await spawnServer({
      env: {
        DATABASE_URL: "memory://",
        APTIX_API_KEYS: `alice:${KEY}`,
        APTIX_CONFIG: undefined,
        APTIX_MAX_BODY_BYTES: undefined,
        OPENAI_API_KEY: "test",
      },
      startTimeoutMs,
    });
  });

  afterAll(async () => {
    await server?.kill();
  });

  /** The access log line of the last request to `path` answered `status`, and its size as written. */
  const accessLogLine = (path: string, status: number) => {
    const line = server.logs.findLast(
      (entry) => entry.message === "request" && entry.path === path && entry.status === status,
    );
    return { line, bytes: Buffer.byteLength(JSON.stringify(line)) };
  };

  for (const megabytes of [10, 30]) {
    it(`answers a ${megabytes} MB body of unknown keys 400 naming at most 20 problems, in 16 KiB, while /healthz answers within 1 s`, async () => {
      const body = unknownKeys(megabytes * 1_000_000);
      expect(body.length).toBeLessThan(32 * MiB);
      const { result, slowestHealthzMs } = await whileProbing(
        server.url,
        send(server.url, "POST", "/v1/agent/execute", chunksOf(body)),
      );
      expect(result.status).toBe(400);
      expect(Buffer.byteLength(result.body)).toBeLessThanOrEqual(16 * 1024);
      const answer = JSON.parse(result.body) as {
        errors: Array<{ code: string; details: { fields: Array<{ path: string; message: string }> } }>;
      };
      expect(answer.errors).toHaveLength(1);
      expect(answer.errors[0]?.code).toBe("VALIDATION_FAILED");
      expect(answer.errors[0]?.details.fields.length).toBeLessThanOrEqual(21);
      expect(slowestHealthzMs).toBeLessThan(HEALTHZ_BOUND_MS);
      await vi.waitFor(() => expect(accessLogLine("/v1/agent/execute", 400).line).toBeDefined());
      expect(accessLogLine("/v1/agent/execute", 400).bytes).toBeLessThanOrEqual(8 * 1024);
    });
  }

  it("answers a 40 MB body 413 at the default 32 MiB limit, and a longer one before the client has sent it", async () => {
    const { result, slowestHealthzMs } = await whileProbing(
      server.url,
      send(server.url, "POST", "/v1/agent/execute", chunksOf(Buffer.alloc(40_000_000, 0x20))),
    );
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body)).toMatchObject({
      errors: [{ code: "PAYLOAD_TOO_LARGE", details: { maxBytes: 32 * MiB } }],
    });
    expect(slowestHealthzMs).toBeLessThan(HEALTHZ_BOUND_MS);
    // Refused while it streams in: the answer comes long before the client could send 256 MiB.
    const endless = await send(server.url, "POST", "/v1/agent/execute", spaces(256));
    expect(endless.status).toBe(413);
    expect(endless.finishedBeforeAnswer).toBe(false);
    expect(endless.writtenBeforeAnswer).toBeLessThan(128 * MiB);
  });

  it("refuses a push past 16 MiB or 1,000 documents with 413 PAYLOAD_TOO_LARGE naming the limit", async () => {
    const documents = (count: number, contents: string) =>
      Buffer.from(
        JSON.stringify({
          documents: Array.from({ length: count }, (_, index) => ({ path: `f${index}.txt`, contents })),
        }),
      );
    const big = await send(server.url, "PUT", "/v1/workspaces/ws/documents", [
      ...chunksOf(documents(15, "x".repeat(MiB - 64))),
      ...spaces(240),
    ]);
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body)).toMatchObject({
      errors: [
        {
          code: "PAYLOAD_TOO_LARGE",
          message: `The body is larger than ${16 * MiB} bytes.`,
          details: { maxBytes: 16 * MiB },
        },
      ],
    });
    expect(big.finishedBeforeAnswer).toBe(false);
    expect(big.writtenBeforeAnswer).toBeLessThan(48 * MiB);

    const many = await send(server.url, "PUT", "/v1/workspaces/ws/documents", [documents(1001, "x")]);
    expect(many.status).toBe(413);
    expect(JSON.parse(many.body)).toMatchObject({
      errors: [
        { code: "PAYLOAD_TOO_LARGE", details: { maxDocuments: 1000, fields: [{ path: "documents" }] } },
      ],
    });
    const thousand = await send(server.url, "PUT", "/v1/workspaces/ws/documents", [documents(1000, "x")]);
    expect(thousand.status).toBe(200);
  });
});
