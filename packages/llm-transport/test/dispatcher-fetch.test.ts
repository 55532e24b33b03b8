import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepAliveFetch } from "../src/index.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  /** The client's port: one per connection. */
  port: number | undefined;
}

/** A real HTTP server: each path answers as a provider (or a misconfigured proxy) might. */
let seen: Seen[] = [];
let release: () => void = () => {};
/** A second origin (another port), where `/v1/elsewhere` on the first sends a request. */
let elsewhere = "";
const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
  let body = "";
  for await (const chunk of request) body += chunk;
  seen.push({
    method: request.method ?? "",
    url: request.url ?? "",
    headers: request.headers,
    body,
    port: request.socket.remotePort,
  });
  const path = request.url?.split("?")[0];
  if (path === "/v1/json") {
    response.writeHead(201, {
      "content-type": "application/json",
      "set-cookie": ["a=1", "b=2"],
      "x-request-id": "r1",
    });
    response.end(JSON.stringify({ echoed: JSON.parse(body || "null") }));
  } else if (path === "/v1/events") {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write("data: first\n\n");
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    response.end("data: last\n\n");
  } else if (path === "/v1/endless") {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write("data: first\n\n");
  } else if (path === "/v1/empty") {
    response.writeHead(204).end();
  } else if (path === "/v1/moved") {
    response.writeHead(307, { location: "/v1/json?moved=1" }).end();
  } else if (path === "/v1/see-other") {
    response.writeHead(303, { location: "/v1/json?seen=1" }).end();
  } else if (path === "/v1/found") {
    response.writeHead(302, { location: "/v1/json?seen=1" }).end();
  } else if (path === "/v1/elsewhere") {
    response.writeHead(308, { location: `${elsewhere}/v1/json` }).end();
  } else if (path === "/v1/slow") {
    setTimeout(() => response.writeHead(200).end("{}"), 5_000).unref();
  } else response.writeHead(404, { "content-type": "application/json" }).end('{"error":"no such path"}');
});
const other = createServer((request, response) => server.emit("request", request, response));
let base = "";
// What the adapters' SDK clients are given: `dispatcherFetch` over a keep-alive agent of its own.
const fetch = keepAliveFetch({ keepAliveTimeout: 1_000, headersTimeout: 120_000 });

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  elsewhere = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const one of [server, other]) {
    one.closeAllConnections();
    one.close();
  }
});

describe("the provider SDKs' fetch over a keep-alive dispatcher", () => {
  it("sends the method, path, query, headers and body, and answers status, headers, body and url", async () => {
    seen = [];
    const response = await fetch(`${base}/v1/json?x=1`, {
      method: "POST",
      headers: new Headers({ "content-type": "application/json", authorization: "Bearer k" }),
      body: JSON.stringify({ model: "m" }),
    });
    expect(seen).toMatchObject([
      { method: "POST", url: "/v1/json?x=1", headers: { authorization: "Bearer k" }, body: '{"model":"m"}' },
    ]);
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.url).toBe(`${base}/v1/json?x=1`);
    expect(response.headers.get("x-request-id")).toBe("r1");
    expect(response.headers.getSetCookie()).toStrictEqual(["a=1", "b=2"]);
    expect(await response.json()).toStrictEqual({ echoed: { model: "m" } });
  });

  it("keeps connections for the next calls rather than opening one a call", async () => {
    seen = [];
    for (const model of ["a", "b", "c", "d", "e"]) {
      const response = await fetch(`${base}/v1/json`, { method: "POST", body: JSON.stringify({ model }) });
      await response.json();
    }
    expect(seen).toHaveLength(5);
    // A call right after another may find its connection not yet handed back, so undici opens a second one.
    expect(new Set(seen.map((request) => request.port)).size).toBeLessThanOrEqual(2);
  });

  it("answers an error status with its body, for the SDK to read", async () => {
    const response = await fetch(`${base}/v1/nothing`, {
      method: "POST",
      body: new TextEncoder().encode("{}"),
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toStrictEqual({ error: "no such path" });
  });

  it("streams an event stream as it comes, not once it ends", async () => {
    const response = await fetch(`${base}/v1/events`, { method: "POST", body: "{}" });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: first\n\n");
    release();
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      rest += new TextDecoder().decode(chunk.value);
    }
    expect(rest).toBe("data: last\n\n");
  });

  it("closes the connection of an event stream its reader cancels", async () => {
    const hungUp = new Promise((resolve) =>
      server.once("request", (_request, response) => response.once("close", resolve)),
    );
    const response = await fetch(`${base}/v1/endless`, { method: "POST", body: "{}" });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.cancel();
    await hungUp;
  });

  it("answers a status without a body with none", async () => {
    const response = await fetch(`${base}/v1/empty`, { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it("follows a redirect through fetch from where it points, sending the request to the first address once", async () => {
    seen = [];
    const response = await fetch(`${base}/v1/moved`, { method: "POST", body: '{"model":"m"}' });
    expect(seen.map((request) => [request.method, request.url, request.body])).toStrictEqual([
      ["POST", "/v1/moved", '{"model":"m"}'],
      ["POST", "/v1/json?moved=1", '{"model":"m"}'],
    ]);
    expect(response.status).toBe(201);
    expect(response.url).toBe(`${base}/v1/json?moved=1`);
    expect(await response.json()).toStrictEqual({ echoed: { model: "m" } });
  });

  it.each(["see-other", "found"])(
    "follows a %s redirect of a POST with a GET, without the body or its headers",
    async (path) => {
      seen = [];
      const response = await fetch(`${base}/v1/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer k" },
        body: '{"model":"m"}',
      });
      expect(seen.map((request) => [request.method, request.url, request.body])).toStrictEqual([
        ["POST", `/v1/${path}`, '{"model":"m"}'],
        ["GET", "/v1/json?seen=1", ""],
      ]);
      expect(seen[1]?.headers["content-type"]).toBeUndefined();
      expect(seen[1]?.headers.authorization).toBe("Bearer k");
      expect(await response.json()).toStrictEqual({ echoed: null });
    },
  );

  it("does not carry credentials on to another origin", async () => {
    seen = [];
    const response = await fetch(`${base}/v1/elsewhere`, {
      method: "POST",
      headers: { authorization: "Bearer k", "x-api-key": "kept", "content-type": "application/json" },
      body: '{"model":"m"}',
    });
    expect(seen.map((request) => [request.method, request.url])).toStrictEqual([
      ["POST", "/v1/elsewhere"],
      ["POST", "/v1/json"],
    ]);
    expect(seen[0]?.headers.authorization).toBe("Bearer k");
    expect(seen[1]?.headers.authorization).toBeUndefined();
    expect(seen[1]?.headers["x-api-key"]).toBe("kept");
    expect(response.url).toBe(`${elsewhere}/v1/json`);
    expect(await response.json()).toStrictEqual({ echoed: { model: "m" } });
  });

  it("answers the redirect itself when asked not to follow it, and rejects when asked to fail on one", async () => {
    seen = [];
    const manual = await fetch(`${base}/v1/moved`, { method: "POST", body: "{}", redirect: "manual" });
    expect(manual.status).toBe(307);
    expect(manual.headers.get("location")).toBe("/v1/json?moved=1");
    await expect(
      fetch(`${base}/v1/moved`, { method: "POST", body: "{}", redirect: "error" }),
    ).rejects.toThrow(TypeError);
    expect(seen.map((request) => request.url)).toStrictEqual(["/v1/moved", "/v1/moved"]);
  });

  it("hands a streamed body, which request is not given, to fetch with the same dispatcher", async () => {
    seen = [];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"streamed":true}'));
        controller.close();
      },
    });
    const response = await fetch(`${base}/v1/json`, { method: "POST", body, duplex: "half" } as RequestInit);
    expect(seen).toMatchObject([{ body: '{"streamed":true}' }]);
    expect(await response.json()).toStrictEqual({ echoed: { streamed: true } });
  });

  it("rejects with an AbortError when the caller's signal aborts, as the SDKs expect of fetch", async () => {
    const controller = new AbortController();
    const pending = fetch(`${base}/v1/slow`, { method: "POST", body: "{}", signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });
});
