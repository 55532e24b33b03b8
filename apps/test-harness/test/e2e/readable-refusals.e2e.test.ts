/**
 * Refusals of bodies the server does not read, against the server as a child process: a client that sends its
 * whole body in one go, as an ordinary one does, reads its 413 (or 429, 503) instead of a reset. The server
 * answers at once with `Connection: close` and reads the rest of the body, dropping it, for a while before it
 * closes; before it did, Node's `http` client met EPIPE instead of its answer in about half the tries.
 */
import { type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ServerProcess, spawnTenantsServer, TENANT_KEYS, type Tenant } from "../../src/e2e/index.js";

// The child compiles the server with tsx: on two busy cores that has taken over 30 s.
const startTimeoutMs = 90_000;
vi.setConfig({ testTimeout: 180_000, hookTimeout: startTimeoutMs + 30_000 });

const MIB = 1024 * 1024;
/** The body limit by default (APTIX_MAX_BODY_BYTES) and a workspace push's. */
const BODY_LIMIT = 32 * MIB;
const PUSH_LIMIT = 16 * MIB;
const TRIES = 20;

let server: ServerProcess;

beforeAll(async () => {
  server = await spawnTenantsServer(startTimeoutMs);
});

afterAll(async () => {
  await server?.kill();
});

interface Refusal {
  status: number;
  code: string | undefined;
  connection: string | undefined;
  retryAfter: string | undefined;
}

interface Sent {
  method: "POST" | "PUT";
  path: string;
  as: Tenant;
  body: Buffer;
}

const headers = (as: Tenant) => ({
  "content-type": "application/json",
  authorization: `Bearer ${TENANT_KEYS[as]}`,
});
const codeOf = (text: string) => (JSON.parse(text) as { errors?: Array<{ code: string }> }).errors?.[0]?.code;

/** What an answer read by Node's `http` client said. */
async function refusal(response: IncomingMessage): Promise<Refusal> {
  let text = "";
  for await (const chunk of response) text += chunk;
  return {
    status: response.statusCode ?? 0,
    code: codeOf(text),
    connection: response.headers.connection,
    retryAfter: response.headers["retry-after"],
  };
}

/**
 * Sends `body` with Node's `http` client as most code does: the whole body in one `end` (with its
 * Content-Length, or in 1 MiB chunks when `chunked`), the answer read on `response`, an `error` before it a failure.
 */
function viaHttp({ method, path, as, body }: Sent, chunked = false): Promise<Refusal> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(new URL(path, server.url), {
      method,
      headers: chunked ? headers(as) : { ...headers(as), "content-length": String(body.length) },
    });
    request.on("response", (response) => resolve(refusal(response)));
    // An error once the answer is read (the server closing on the body's rest) settles nothing.
    request.on("error", reject);
    if (!chunked) request.end(body);
    else {
      for (let at = 0; at < body.length; at += MIB) request.write(body.subarray(at, at + MIB));
      request.end();
    }
  });
}

/** Sends `body` with fetch (undici), as a web app's or a script's client does. */
async function viaFetch({ method, path, as, body }: Sent): Promise<Refusal> {
  const response = await fetch(new URL(path, server.url), { method, headers: headers(as), body });
  return {
    status: response.status,
    code: codeOf(await response.text()),
    connection: response.headers.get("connection") ?? undefined,
    retryAfter: response.headers.get("retry-after") ?? undefined,
  };
}

/** `TRIES` sends one after the other, and what each read. */
async function tries(send: () => Promise<Refusal>): Promise<Refusal[]> {
  const answers: Refusal[] = [];
  for (let index = 0; index < TRIES; index++) answers.push(await send());
  return answers;
}

/** `TRIES` answers of `status` and `code` read, each closing its connection; a limit's says when to try again. */
const read = (status: number, code: string, retryAfter?: string) =>
  Array.from({ length: TRIES }, () => ({ status, code, connection: "close", retryAfter }));

/** An upload of `bytes` whose headers go out at once and whose body is never sent: it holds its place. */
class Held {
  readonly request: ClientRequest;
  readonly answer: Promise<Refusal>;

  constructor(as: Tenant, bytes: number) {
    this.request = httpRequest(new URL("/v1/agent/execute", server.url), {
      method: "POST",
      agent: false,
      headers: { ...headers(as), "content-length": String(bytes) },
    });
    this.answer = new Promise((resolve) => {
      this.request.on("response", (response) => resolve(refusal(response)));
    });
    // Released by destroying it.
    this.request.on("error", () => undefined);
    this.request.flushHeaders();
  }
}

/** The first of `uploads` answered (the others are held), once answered. */
const firstAnswered = (uploads: Held[]) => Promise.race(uploads.map((upload) => upload.answer));

describe("a refused body, in a server process", () => {
  const tooLarge: Sent = {
    method: "POST",
    path: "/v1/agent/execute",
    as: "alice",
    body: Buffer.alloc(2 * BODY_LIMIT, 0x20),
  };

  it(`reads its 413 with Node's http client, ${TRIES} tries of 64 MiB past the 32 MiB limit of ${TRIES}`, async () => {
    expect(await tries(() => viaHttp(tooLarge))).toEqual(read(413, "PAYLOAD_TOO_LARGE"));
  });

  it(`reads its 413 with fetch, ${TRIES} tries of 64 MiB of ${TRIES}`, async () => {
    expect(await tries(() => viaFetch(tooLarge))).toEqual(read(413, "PAYLOAD_TOO_LARGE"));
  });

  it("reads its 413 when the 64 MiB come chunked, without a Content-Length, refused as they stream in", async () => {
    expect(await tries(() => viaHttp(tooLarge, true))).toEqual(read(413, "PAYLOAD_TOO_LARGE"));
  });

  it("reads a workspace push's 413 past 16 MiB, with either client", async () => {
    const push: Sent = {
      method: "PUT",
      path: "/v1/workspaces/large/documents",
      as: "bob",
      body: Buffer.alloc(PUSH_LIMIT + 4 * MIB, 0x20),
    };
    expect(await tries(() => viaHttp(push))).toEqual(read(413, "PAYLOAD_TOO_LARGE"));
    expect(await tries(() => viaFetch(push))).toEqual(read(413, "PAYLOAD_TOO_LARGE"));
  });

  it("reads the 429 and 503 of bodies in flight, with either client", async () => {
    // Alice's four slow 32 MiB bodies hold her 128 MiB: a fifth is refused, and so is any other body of hers.
    const alices = Array.from({ length: 5 }, () => new Held("alice", BODY_LIMIT));
    expect(await firstAnswered(alices)).toEqual({
      status: 429,
      code: "RATE_LIMITED",
      connection: "close",
      retryAfter: "5",
    });
    const small: Sent = {
      method: "POST",
      path: "/v1/agent/execute",
      as: "alice",
      body: Buffer.alloc(8 * MIB, 0x20),
    };
    expect(await tries(() => viaHttp(small))).toEqual(read(429, "RATE_LIMITED", "5"));
    expect(await tries(() => viaFetch(small))).toEqual(read(429, "RATE_LIMITED", "5"));

    // Bob's four make 256 MiB, all the instance reads at once: then Carol's bodies are refused 503.
    const bobs = Array.from({ length: 4 }, () => new Held("bob", BODY_LIMIT));
    const carols = [new Held("carol", BODY_LIMIT)];
    expect(await firstAnswered([...bobs, ...carols])).toEqual({
      status: 503,
      code: "NOT_READY",
      connection: "close",
      retryAfter: "5",
    });
    const carol = { ...small, as: "carol" as const };
    expect(await tries(() => viaHttp(carol))).toEqual(read(503, "NOT_READY", "5"));
    expect(await tries(() => viaFetch(carol))).toEqual(read(503, "NOT_READY", "5"));

    for (const held of [...alices, ...bobs, ...carols]) held.request.destroy();
  });
});
