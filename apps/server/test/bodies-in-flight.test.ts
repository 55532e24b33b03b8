import { type ClientRequest, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
  return {
    request,
    answer,
    finish() {
      request.end(Buffer.alloc(bytes ?? 2 * MIB, 0x20));
      return answer;
    },
  };
}

/** The first of `uploads` answered, and the others. */
async function firstAnswered(uploads: Upload[]): Promise<{ answer: Answer; others: Upload[] }> {
  const [index, answer] = await Promise.race(
    uploads.map((entry, index) => entry.answer.then((answered) => [index, answered] as const)),
  );
  return { answer, others: uploads.filter((_, other) => other !== index) };
}

const notJson = { status: 400, code: "VALIDATION_FAILED" };
const outcome = (answer: Answer) => ({ status: answer.status, code: answer.body.errors[0]?.code });

describe("bodies in flight (at most 4 over 1 MiB per principal, 256 MiB in all, per instance)", () => {
  it("refuses a principal's fifth large body 429 with Retry-After before reading it, and lets others in", async () => {
    const { answer, others } = await firstAnswered([1, 2, 3, 4, 5].map(() => upload("alice", 2 * MIB)));
    expect(answer.status).toBe(429);
    expect(answer.headers["retry-after"]).toBe("5");
    expect(answer.body.errors).toEqual([
      {
        code: "RATE_LIMITED",
        message:
          "Too many large bodies: this principal may have 4 bodies over 1 MiB read at once; try again in 5 s.",
        details: { retryAfterSeconds: 5 },
      },
    ]);
    // A body of 1 MiB is not a large one; another principal has a count of its own.
    expect(outcome(await upload("alice", MIB).finish())).toEqual(notJson);
    expect(outcome(await upload("bob", 2 * MIB).finish())).toEqual(notJson);

    // Once one of the four is read, its place is free again.
    const [first, ...rest] = others;
    expect(outcome(await (first as Upload).finish())).toEqual(notJson);
    expect(outcome(await upload("alice", 2 * MIB).finish())).toEqual(notJson);
    for (const entry of rest) expect(outcome(await entry.finish())).toEqual(notJson);
  });

  it("counts a chunked body, whose length is not known, as large and at the body limit (32 MiB)", async () => {
    const alices = await firstAnswered([1, 2, 3, 4, 5].map(() => upload("alice", undefined)));
    expect(outcome(alices.answer)).toEqual({ status: 429, code: "RATE_LIMITED" });
    // Alice's four and Bob's four chunked bodies hold 8 × 32 MiB, all 256 MiB: one of Bob's or Carol's small
    // one, whichever comes last, is refused 503.
    const { answer, others } = await firstAnswered([
      ...[1, 2, 3, 4].map(() => upload("bob", undefined)),
      upload("carol", 100),
    ]);
    expect(answer.status).toBe(503);
    expect(answer.headers["retry-after"]).toBe("5");
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
    const gone = await firstAnswered([1, 2, 3, 4, 5].map(() => upload("alice", 2 * MIB)));
    expect(outcome(gone.answer)).toEqual({ status: 429, code: "RATE_LIMITED" });
    for (const entry of gone.others) {
      entry.request.on("error", () => undefined);
      entry.request.write(Buffer.alloc(MIB));
      entry.request.destroy();
    }
    // The places free once the server has seen the connections close: then four of five are let in again.
    let admitted: Array<{ status: number; code: string | undefined }> = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      const { others } = await firstAnswered([1, 2, 3, 4, 5].map(() => upload("alice", 2 * MIB)));
      admitted = [];
      for (const entry of others) admitted.push(outcome(await entry.finish()));
      if (admitted.every((answer) => answer.status === 400)) break;
    }
    expect(admitted).toEqual([notJson, notJson, notJson, notJson]);
  });
});
