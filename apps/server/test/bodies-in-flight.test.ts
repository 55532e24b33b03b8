import { type ClientRequest, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BodiesInFlight } from "../src/http/middleware/bodies-in-flight.js";
import { setup } from "./http-app-setup.js";

const MIB = 1024 * 1024;
const KEYS = { alice: "alice-key-0123456789", bob: "bob-key-0123456789ab", carol: "carol-key-0123456789" };
type Principal = keyof typeof KEYS;

let server: ReturnType<typeof serve>;
let port: number;

// The body limit the service runs with by default: a chunked body is counted at it.
beforeAll(async () => {
  const { app } = setup({
    apiKeys: new Map(Object.entries(KEYS).map(([principal, key]) => [key, principal])),
    maxBodyBytes: 32 * MIB,
  });
  server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => {
  // Uploads a test left unfinished hold their connections open.
  (server as Server).closeAllConnections();
  server.close();
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: { errors: Array<{ code: string; message: string; details?: unknown }> };
}

interface Upload {
  request: ClientRequest;
  answer: Promise<Answer>;
  /** The answer, once read. */
  answered: Answer | undefined;
  /** Sends the rest of a `bytes`-long body (spaces: not JSON, so it is read whole and refused 400). */
  finish(): Promise<Answer>;
}

/**
 * A POST of `bytes` (Content-Length; chunked when undefined) whose headers go out at once and whose body waits
 * for `finish`: a slow upload, admitted or refused on its headers alone.
 */
function upload(as: Principal, bytes: number | undefined): Upload {
  const request = httpRequest({
    port,
    host: "127.0.0.1",
    method: "POST",
    path: "/v1/agent/execute",
    agent: false,
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEYS[as]}`,
      ...(bytes === undefined ? {} : { "content-length": String(bytes) }),
    },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    request.on("response", async (response) => {
      let text = "";
      for await (const chunk of response) text += chunk;
      resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) });
    });
    request.on("error", reject);
  });
  request.flushHeaders();
  const entry: Upload = {
    request,
    answer,
    answered: undefined,
    finish() {
      request.end(Buffer.alloc(bytes ?? 2 * MIB, 0x20));
      return answer;
    },
  };
  answer.then(
    (read) => {
      entry.answered = read;
    },
    () => undefined,
  );
  return entry;
}

/** The first of `uploads` answered, and the others. */
async function firstAnswered(uploads: Upload[]): Promise<{ answer: Answer; others: Upload[] }> {
  const [index, answer] = await Promise.race(
    uploads.map((entry, index) => entry.answer.then((answered) => [index, answered] as const)),
  );
  return { answer, others: uploads.filter((_, other) => other !== index) };
}

/** Resolves once `count` of `uploads` are answered, with those answers. */
function answered(uploads: Upload[], count: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  return new Promise((resolve, reject) => {
    for (const entry of uploads) {
      entry.answer.then((answer) => {
        answers.push(answer);
        if (answers.length === count) resolve(answers);
      }, reject);
    }
  });
}

const notJson = { status: 400, code: "VALIDATION_FAILED" };
const outcome = (answer: Answer) => ({ status: answer.status, code: answer.body.errors[0]?.code });
const tooMany = { status: 429, code: "RATE_LIMITED" };

describe("bodies in flight (128 MiB per principal, 256 MiB in all, per instance)", () => {
  it("refuses a principal's body past 128 MiB 429 with Retry-After before reading it, and lets others in", async () => {
    const { answer, others } = await firstAnswered([1, 2, 3, 4, 5].map(() => upload("alice", 32 * MIB)));
    expect(answer.status).toBe(429);
    expect(answer.headers["retry-after"]).toBe("5");
    // Answered at once, and the connection closes once the client has had the time to read it.
    expect(answer.headers.connection).toBe("close");
    expect(answer.body.errors).toEqual([
      {
        code: "RATE_LIMITED",
        message:
          "Too many bodies in flight: this principal may have 128 MiB of request bodies read at once, each " +
          "counted by its Content-Length (at least 64 KiB); try again in 5 s.",
        details: { retryAfterSeconds: 5 },
      },
    ]);
    // Every body counts, a small one too; another principal has bytes of its own.
    expect(outcome(await upload("alice", 100).finish())).toEqual(tooMany);
    expect(outcome(await upload("bob", 32 * MIB).finish())).toEqual(notJson);

    // Once one of the four is read, its place is free again.
    const [first, ...rest] = others;
    expect(outcome(await (first as Upload).finish())).toEqual(notJson);
    expect(outcome(await upload("alice", 32 * MIB).finish())).toEqual(notJson);
    for (const entry of rest) expect(outcome(await entry.finish())).toEqual(notJson);
  });

  it("counts bodies of 1 MiB and less: one principal's 257 hold 128 MiB, and another's small POST answers", async () => {
    // Before every body was counted, 257 bodies of 1 MiB held 257 MiB and Bob's POST was refused 503.
    const alices = Array.from({ length: 257 }, () => upload("alice", MIB));
    const refused = await answered(alices, 129);
    expect(refused.map(outcome)).toEqual(refused.map(() => tooMany));
    expect(outcome(await upload("bob", 100).finish())).toEqual(notJson);
    expect(outcome(await upload("alice", 100).finish())).toEqual(tooMany);
    const held = alices.filter((entry) => entry.answered === undefined);
    expect(held).toHaveLength(128);
    for (const entry of held) expect(outcome(await entry.finish())).toEqual(notJson);
  });

  it("counts a chunked body, whose length is not known, at the body limit (32 MiB)", async () => {
    const alices = await firstAnswered([1, 2, 3, 4, 5].map(() => upload("alice", undefined)));
    expect(outcome(alices.answer)).toEqual(tooMany);
    // Alice's four and Bob's four chunked bodies hold 8 × 32 MiB, all 256 MiB: one of Bob's or Carol's small
    // one, whichever comes last, is refused 503.
    const { answer, others } = await firstAnswered([
      ...[1, 2, 3, 4].map(() => upload("bob", undefined)),
      upload("carol", 100),
    ]);
    expect(answer.status).toBe(503);
    expect(answer.headers["retry-after"]).toBe("5");
    expect(answer.headers.connection).toBe("close");
    expect(answer.body.errors).toEqual([
      {
        code: "NOT_READY",
        message:
          "The service is reading as many request bodies as it holds at once (256 MiB); send the request again later.",
        details: { retryable: true, retryAfterSeconds: 5 },
      },
    ]);
    for (const entry of [...alices.others, ...others]) expect(outcome(await entry.finish())).toEqual(notJson);
    expect(outcome(await upload("carol", 100).finish())).toEqual(notJson);
  });

  it("frees the place of a body whose client went away before sending it all", async () => {
    const gone = await firstAnswered([1, 2, 3, 4, 5].map(() => upload("alice", 32 * MIB)));
    expect(outcome(gone.answer)).toEqual(tooMany);
    for (const entry of gone.others) {
      entry.request.on("error", () => undefined);
      entry.request.write(Buffer.alloc(MIB));
      entry.request.destroy();
    }
    // The places free once the server has seen the connections close: then four of five are let in again.
    let admitted: Array<{ status: number; code: string | undefined }> = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      const { others } = await firstAnswered([1, 2, 3, 4, 5].map(() => upload("alice", 32 * MIB)));
      admitted = [];
      for (const entry of others) admitted.push(outcome(await entry.finish()));
      if (admitted.every((answer) => answer.status === 400)) break;
    }
    expect(admitted).toEqual([notJson, notJson, notJson, notJson]);
  });
});

describe("BodiesInFlight", () => {
  it("counts a body as at least 64 KiB, and a request without one as nothing", () => {
    const inFlight = new BodiesInFlight();
    // 2,048 bodies declaring 10 bytes each count 128 MiB: the held connections are bounded too.
    const held = Array.from({ length: 2048 }, () => inFlight.reserve("alice", 10));
    expect(held.filter((reserved) => !reserved.successful)).toEqual([]);
    expect(inFlight.reserve("alice", 10)).toMatchObject({
      successful: false,
      errors: [{ code: "RATE_LIMITED" }],
    });
    expect(inFlight.reserve("alice", 0).successful).toBe(true);
    expect(inFlight.reserve("bob", 10).successful).toBe(true);
    // A release frees its place, once however often it is called.
    const [first] = held;
    if (first?.successful) {
      first.result();
      first.result();
    }
    expect(inFlight.reserve("alice", 10).successful).toBe(true);
    expect(inFlight.reserve("alice", 10).successful).toBe(false);
  });

  it("lets a body of any size in when nothing else is being read, so a raised limit still serves it", () => {
    const inFlight = new BodiesInFlight();
    const large = inFlight.reserve("alice", 512 * MIB);
    expect(large.successful).toBe(true);
    expect(inFlight.reserve("bob", 100)).toMatchObject({
      successful: false,
      errors: [{ code: "NOT_READY" }],
    });
    if (large.successful) large.result();
    expect(inFlight.reserve("bob", 100).successful).toBe(true);
  });
});
