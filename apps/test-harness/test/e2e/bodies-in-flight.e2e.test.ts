/**
 * Bodies in flight, against the server as a child process: 50 slow uploads of 32 MiB from one key, then more
 * from two others. The server reads at most 128 MiB of bodies per principal (four of 32 MiB) and 256 MiB in all
 * at once, so its resident memory (`process_resident_memory_bytes`, from its own /proc/self/status) grows by the
 * bodies it let in, not by all that were sent: 55 uploads held whole would be 1.7 GiB.
 */
import { type ClientRequest, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ServerProcess, spawnTenantsServer, TENANT_KEYS, type Tenant } from "../../src/e2e/index.js";

// The child compiles the server with tsx: on two busy cores that has taken over 30 s.
const startTimeoutMs = 90_000;
vi.setConfig({ testTimeout: 180_000, hookTimeout: startTimeoutMs + 30_000 });

const MIB = 1024 * 1024;
/** The body limit by default (APTIX_MAX_BODY_BYTES), and each upload's size. */
const BODY_BYTES = 32 * MIB;
/** What the service reads at once: 128 MiB of a principal's bodies, 256 MiB in all. */
const PER_PRINCIPAL_BYTES = 128 * MIB;
const INSTANCE_BYTES = 256 * MIB;
/**
 * Room above the bodies' bytes: the heap of handling 55 requests and logging them, and the allocator's
 * rounding. Far below one more body let in per principal (32 MiB each).
 */
const OVERHEAD_BYTES = 48 * MIB;

let server: ServerProcess;

beforeAll(async () => {
  server = await spawnTenantsServer(startTimeoutMs);
});

afterAll(async () => {
  await server?.kill();
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  code: string | undefined;
}

/** An upload whose headers go out at once and whose body (`bytes`, 32 MiB unless said) is sent by `send`. */
class Upload {
  readonly request: ClientRequest;
  readonly answer: Promise<Answer>;
  answered: Answer | undefined;
  sent = 0;

  constructor(
    as: Tenant,
    readonly bytes = BODY_BYTES,
  ) {
    this.request = httpRequest(new URL("/v1/agent/execute", server.url), {
      method: "POST",
      agent: false,
      headers: {
        "content-type": "application/json",
        "content-length": String(bytes),
        authorization: `Bearer ${TENANT_KEYS[as]}`,
      },
    });
    this.answer = new Promise<Answer>((resolve, reject) => {
      this.request.on("response", async (response) => {
        let text = "";
        for await (const chunk of response) text += chunk;
        const body = JSON.parse(text) as { errors: Array<{ code: string }> };
        this.answered = {
          status: response.statusCode ?? 0,
          headers: response.headers,
          code: body.errors[0]?.code,
        };
        // A refused upload stops sending: the server has answered it without reading its body.
        if (this.sent < this.bytes) this.request.destroy();
        resolve(this.answered);
      });
      this.request.on("error", (error) => {
        if (this.answered === undefined) reject(error);
      });
    });
    this.request.flushHeaders();
  }
}

const chunk = Buffer.alloc(MIB, 0x20);

/** Writes `bytes` more of each upload's body (spaces) that is not answered yet, waiting for each to drain. */
async function send(uploads: Upload[], bytes: number): Promise<void> {
  for (let written = 0; written < bytes; written += chunk.length) {
    const size = Math.min(chunk.length, bytes - written);
    await Promise.all(
      uploads
        .filter((entry) => entry.answered === undefined && !entry.request.destroyed)
        .map(
          (entry) =>
            new Promise<void>((resolve) => {
              entry.sent += size;
              const data = chunk.subarray(0, size);
              if (entry.sent === entry.bytes) entry.request.end(data, resolve);
              else if (entry.request.write(data)) resolve();
              else {
                const drained = () => {
                  entry.request.off("drain", drained).off("close", drained);
                  resolve();
                };
                entry.request.on("drain", drained).on("close", drained);
              }
            }),
        ),
    );
  }
}

/** Waits until `count` of `uploads` are answered, and returns those answers. */
async function answered(uploads: Upload[], count: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  await new Promise<void>((resolve, reject) => {
    for (const entry of uploads) {
      entry.answer.then((answer) => {
        answers.push(answer);
        if (answers.length === count) resolve();
      }, reject);
    }
  });
  return answers;
}

/** The server's resident set, as its own metrics read it from /proc/self/status. */
async function residentBytes(): Promise<number> {
  const text = await (await fetch(new URL("/metrics", server.url))).text();
  const match = /^process_resident_memory_bytes (\d+)$/m.exec(text);
  if (!match?.[1]) throw new Error(`no process_resident_memory_bytes in /metrics:\n${text}`);
  return Number(match[1]);
}

const mib = (bytes: number) => Math.round(bytes / MIB);

describe("bodies in flight, in a server process", () => {
  it("holds at most 4 slow 32 MiB bodies of one key and 256 MiB in all, refusing the rest before reading them", async () => {
    // Warm: the path a large body takes (read, parsed, refused), so its code is in the baseline. A small one:
    // the memory a 32 MiB body leaves free after it would hide the growth measured next.
    for (const as of ["alice", "bob"] as const) {
      const warm = new Upload(as, 2 * MIB);
      await send([warm], 2 * MIB);
      expect((await warm.answer).status).toBe(400);
    }
    const before = await residentBytes();

    // 50 uploads of alice's, all sending their headers, then their bodies slowly: 46 are refused 429 at once.
    const alices = Array.from({ length: 50 }, () => new Upload("alice"));
    const refused = await answered(alices, 46);
    for (const answer of refused) {
      expect(answer).toMatchObject({ status: 429, code: "RATE_LIMITED", headers: { "retry-after": "5" } });
    }
    const held = alices.filter((entry) => entry.answered === undefined);
    expect(held).toHaveLength(4);
    await send(alices, BODY_BYTES - 1);
    const withAlices = await residentBytes();

    // Bob's four and Carol's one would make 288 MiB: whichever comes last is refused 503.
    const others = [
      ...(["bob", "bob", "bob", "bob"] as const).map((as) => new Upload(as)),
      new Upload("carol"),
    ];
    const [full] = await answered(others, 1);
    expect(full).toMatchObject({ status: 503, code: "NOT_READY", headers: { "retry-after": "5" } });
    await send(others, BODY_BYTES - 1);
    const withAll = await residentBytes();

    // Every body let in is read to its end: spaces, not JSON.
    await send([...held, ...others], 1);
    const read = [...held, ...others].filter((entry) => entry.answered?.status !== 503);
    expect(read).toHaveLength(8);
    for (const entry of read) expect((await entry.answer).status).toBe(400);
    const after = await residentBytes();

    console.info(
      `RSS of the server: ${mib(before)} MiB before, ${mib(withAlices)} MiB with alice's 4 held of 50 sent, ` +
        `${mib(withAll)} MiB with 8 held (256 MiB), ${mib(after)} MiB after all were read`,
    );
    expect(withAlices - before).toBeLessThan(PER_PRINCIPAL_BYTES + OVERHEAD_BYTES);
    expect(withAll - before).toBeLessThan(INSTANCE_BYTES + OVERHEAD_BYTES);
  });
});
