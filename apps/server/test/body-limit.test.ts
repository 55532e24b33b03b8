import { request as httpRequest } from "node:http";
import { type AddressInfo, connect } from "node:net";
import {
  contractJsonSchemas,
  createAgentExecuteRequestValidator,
  DEFAULT_REQUEST_LIMITS,
  type RequestLimits,
} from "@aptix/contracts";
import { serve } from "@hono/node-server";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readServerEnv } from "../src/config/server-env.js";
import { setup } from "./http-app-setup.js";
import { jsonByteLength, largestRequests, maxRequestBodyBytes } from "./largest-requests.js";

/** Limits small enough to build the largest requests for real (the fixed field lengths still apply). */
const smallLimits: fc.Arbitrary<RequestLimits> = fc.record({
  maxInstructionChars: fc.integer({ min: 1, max: 40 }),
  maxInputArtifacts: fc.integer({ min: 0, max: 3 }),
  maxArtifactBytes: fc.integer({ min: 1, max: 40 }),
  maxArtifactTotalBytes: fc.integer({ min: 1, max: 100 }),
  maxClipboardImages: fc.integer({ min: 0, max: 3 }),
  maxImageBytes: fc.integer({ min: 1, max: 40 }),
  maxRagScopeConditions: fc.integer({ min: 0, max: 3 }),
  maxRagScopeValues: fc.integer({ min: 1, max: 3 }),
  maxSolutionContextChars: fc.integer({ min: 0, max: 40 }),
  maxToolResults: fc.integer({ min: 1, max: 3 }),
  maxToolResultChars: fc.integer({ min: 1, max: 40 }),
});

/** The largest requests under `limits`, written out as a client's JSON.stringify writes them. */
const largestBodies = (limits: RequestLimits) =>
  Object.values(largestRequests(limits)).map((request) => ({ request, json: JSON.stringify(request) }));

/** The app with a body limit of `maxBodyBytes`, served over HTTP on a free port. */
async function listening(maxBodyBytes: number) {
  const { app } = setup({ maxBodyBytes });
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/**
 * A POST declaring a 1 GiB body, over a bare socket (an HTTP client stops sending once it has read an answer that
 * closes): `send` bytes of it go out as fast as the connection takes them, and the rest never. Resolves once the
 * server has closed the connection, with what it answered and the bytes written.
 */
function declaringGigabyte(port: number, send: number) {
  return new Promise<{ answer: string; written: number }>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.write(
      "POST /v1/agent/execute HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
        `Content-Length: ${1024 ** 3}\r\nAuthorization: Bearer alice-key-0123456789\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let written = 0;
    const pump = () => {
      while (!socket.destroyed && written < send) {
        written += chunk.length;
        if (!socket.write(chunk)) {
          socket.once("drain", pump);
          return;
        }
      }
    };
    let answer = "";
    socket.on("data", (data) => {
      answer += data;
    });
    // A reset once the server has dropped enough of the body is the end this waits for, as a close is.
    socket.on("error", () => undefined);
    socket.on("close", () => resolve({ answer, written }));
    pump();
  });
}

/** The fields of a JSON Schema that `value` lacks, at any depth (a list's first entry stands for all). */
function missingFields(schema: Record<string, unknown>, value: unknown, path = ""): string[] {
  const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (properties && typeof value === "object" && value !== null && !Array.isArray(value)) {
    return Object.entries(properties).flatMap(([key, field]) =>
      key in value
        ? missingFields(field, (value as Record<string, unknown>)[key], `${path}.${key}`)
        : [`${path}.${key}`],
    );
  }
  const items = schema.items as Record<string, unknown> | undefined;
  if (items && Array.isArray(value) && value.length > 0) return missingFields(items, value[0], `${path}[0]`);
  return [];
}

describe("the request body limit", () => {
  it("defaults to 32 MiB, and the largest request the contracts' default limits accept fits inside it", () => {
    const { APTIX_MAX_BODY_BYTES } = readServerEnv({});
    expect(APTIX_MAX_BODY_BYTES).toBe(32 * 1024 * 1024);
    // A user turn: 4 images of 4 MiB, 1 MiB of artifacts and 32 ragScope conditions of 16 values, its free
    // text at 6 bytes a character (`\u0001`).
    expect(maxRequestBodyBytes(DEFAULT_REQUEST_LIMITS)).toBe(32_951_826);
    expect(maxRequestBodyBytes(DEFAULT_REQUEST_LIMITS)).toBeLessThanOrEqual(APTIX_MAX_BODY_BYTES);
    expect(DEFAULT_REQUEST_LIMITS.maxToolResultChars).toBe(262_144);
    expect(readServerEnv({ APTIX_MAX_BODY_BYTES: "2048" }).APTIX_MAX_BODY_BYTES).toBe(2048);
  });

  it("is reached by requests the contracts accept, sized exactly, whatever the limits", () => {
    fc.assert(
      fc.property(smallLimits, (limits) => {
        const validate = createAgentExecuteRequestValidator(limits);
        const bodies = largestBodies(limits);
        for (const { request, json } of bodies) {
          expect(jsonByteLength(request)).toBe(Buffer.byteLength(json));
          expect(validate(JSON.parse(json)).errors).toEqual([]);
        }
        expect(maxRequestBodyBytes(limits)).toBe(
          Math.max(...bodies.map(({ json }) => Buffer.byteLength(json))),
        );
      }),
      { numRuns: 60 },
    );
  });

  it("counts every field of both requests, so a field the contracts add cannot be left out", () => {
    const request = contractJsonSchemas()["agent-execute-request.schema.json"] as { anyOf: object[] };
    const [userTurn, toolContinuation] = request.anyOf as Record<string, unknown>[];
    const largest = largestRequests();
    expect(missingFields(userTurn ?? {}, largest.userTurn)).toEqual([]);
    // A tool result carries errorMessage or resultJson, never both: errorMessage is the larger.
    expect(missingFields(toolContinuation ?? {}, largest.toolContinuation)).toEqual([
      ".toolResults[0].resultJson",
    ]);
  });

  it("lets the largest request through at the limit and answers 413 a byte below it", async () => {
    await fc.assert(
      fc.asyncProperty(smallLimits, async (limits) => {
        const maxBodyBytes = maxRequestBodyBytes(limits);
        const [largest] = largestBodies(limits).sort(
          (a, b) => Buffer.byteLength(b.json) - Buffer.byteLength(a.json),
        );
        const json = largest?.json ?? "";
        expect((await setup({ maxBodyBytes, limits }).post(json)).status).not.toBe(413);
        expect((await setup({ maxBodyBytes: maxBodyBytes - 1, limits }).post(json)).status).toBe(413);
      }),
      { numRuns: 20 },
    );
  });

  it("answers a body one byte over the default limit 413 without reading it", async () => {
    const { APTIX_MAX_BODY_BYTES } = readServerEnv({});
    const { app } = setup({ maxBodyBytes: APTIX_MAX_BODY_BYTES });
    let chunks = 0;
    // Endless on purpose: the limit is judged by Content-Length, before a byte is read.
    const body = new ReadableStream({
      pull: (controller) => {
        chunks++;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    const response = await app.request("/v1/agent/execute", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": String(APTIX_MAX_BODY_BYTES + 1),
        authorization: "Bearer alice-key-0123456789",
      },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(response.headers.get("connection")).toBe("close");
    expect(await response.json()).toMatchObject({
      errors: [{ code: "PAYLOAD_TOO_LARGE", details: { maxBytes: APTIX_MAX_BODY_BYTES } }],
    });
    expect(chunks).toBeLessThan(4);
  });

  it("answers a body that breaks off 400 VALIDATION_FAILED naming the whole body, and runs nothing", async () => {
    const { app, provider } = setup();
    let sent = 0;
    const body = new ReadableStream({
      pull: (controller) => {
        if (sent++ === 0) controller.enqueue(new TextEncoder().encode('{"sessionId": "s", "turnId": "t", '));
        else controller.error(new Error("connection reset"));
      },
    });
    const response = await app.request("/v1/agent/execute", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer alice-key-0123456789" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      errors: [
        {
          code: "VALIDATION_FAILED",
          details: { fields: [{ path: "", message: "could not be read to its end" }] },
        },
      ],
    });
    expect(provider.requests).toHaveLength(0);
  });

  it("over real HTTP, reads a body sent in chunks up to the limit, and answers one past it 413", async () => {
    const { server, port } = await listening(1_000_000);
    // Chunked: no Content-Length, so the limit is judged by the bytes as they come.
    const send = (chunks: string[]) =>
      new Promise<{ status: number; body: { errors?: Array<{ code: string; details: unknown }> } }>(
        (resolve, reject) => {
          const sent = httpRequest(
            {
              port,
              host: "127.0.0.1",
              method: "POST",
              path: "/v1/agent/execute",
              headers: { "content-type": "application/json", authorization: "Bearer alice-key-0123456789" },
            },
            async (response) => {
              let text = "";
              for await (const chunk of response) text += chunk;
              resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) });
            },
          );
          sent.on("error", reject);
          for (const chunk of chunks) sent.write(chunk);
          sent.end();
        },
      );
    try {
      // The schema names a field of the body, so the whole body was read and parsed: [0xEF 0xBB 0xBF] is dropped
      // as Request.text() drops it.
      const withinLimit = await send([
        "\uFEFF",
        '{"sessionId": "s", ',
        '"turnId": "t", "unknown": "',
        "x".repeat(600_000),
        '"}',
      ]);
      expect(withinLimit.status).toBe(400);
      expect(withinLimit.body.errors?.[0]).toMatchObject({
        code: "VALIDATION_FAILED",
        details: { fields: expect.arrayContaining([expect.objectContaining({ path: "unknown" })]) },
      });
      const pastLimit = await send([
        '{"sessionId": "s", "instruction": "',
        "x".repeat(600_000),
        "x".repeat(600_000),
        '"}',
      ]);
      expect(pastLimit.status).toBe(413);
      expect(pastLimit.body.errors?.[0]).toMatchObject({
        code: "PAYLOAD_TOO_LARGE",
        details: { maxBytes: 1_000_000 },
      });
    } finally {
      server.close();
    }
  });

  it("over real HTTP, answers a body past the limit by its Content-Length, then reads at most the limit's size more", async () => {
    const { server, port } = await listening(1_000_000);
    const refusedAndClosed = /^HTTP\/1\.1 413 .*\r\nconnection: close\r\n.*"PAYLOAD_TOO_LARGE"/is;
    try {
      // Sent on and on: the server reads 1,000,000 bytes of it, dropping them, then no more, and closes after 5 s.
      // What was written past that sits in the two sockets' buffers (a few MiB on loopback).
      const endless = await declaringGigabyte(port, Number.POSITIVE_INFINITY);
      expect(endless.answer).toMatch(refusedAndClosed);
      expect(endless.written).toBeLessThan(32 * 1024 * 1024);
      // A body that stops coming is waited for a while, then its connection is closed all the same.
      const stalled = await declaringGigabyte(port, 1);
      expect(stalled.answer).toMatch(refusedAndClosed);
    } finally {
      server.close();
    }
  });
});
