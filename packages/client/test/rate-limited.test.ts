import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AptixClient } from "../src/index.js";

type Answer = (response: ServerResponse) => void;

/** A real HTTP server on loopback that gives `answers` in turn, and records when each request came. */
async function answering(answers: Answer[]) {
  const arrivals: number[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    arrivals.push(Date.now());
    request.resume();
    const next = answers.shift();
    if (next === undefined) response.writeHead(500).end("no answer left");
    else next(response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  servers.push(server);
  return { url: `http://127.0.0.1:${port}`, arrivals };
}

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  (response) =>
    response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));

/** The service's 429, as `apps/server` answers it. */
const rateLimited = (seconds: number) =>
  json(
    429,
    {
      successful: false,
      errors: [
        {
          code: "RATE_LIMITED",
          message: `Too many requests; try again in ${seconds} s.`,
          details: { retryAfterSeconds: seconds },
        },
      ],
      warnings: [],
    },
    { "retry-after": String(seconds) },
  );
const session = json(200, {
  successful: true,
  result: { sessionId: "s1", turns: [] },
  errors: [],
  warnings: [],
});

describe("a 429 answer", () => {
  it("is sent again after its Retry-After, and the next answer returned", async () => {
    const { url, arrivals } = await answering([rateLimited(1), session]);
    const client = new AptixClient({ baseUrl: url, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    const answer = await client.getSession("s1");
    expect(answer).toMatchObject({ successful: true, result: { sessionId: "s1" } });
    expect(arrivals).toHaveLength(2);
    // Retry-After: 1 (second) was honoured, though the backoff alone would have been 1–5 ms.
    expect((arrivals[1] ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThanOrEqual(1000);
  });

  it("is retried at most maxAttempts times, then returned as it is", async () => {
    const { url, arrivals } = await answering([rateLimited(0), rateLimited(0), rateLimited(0), session]);
    const client = new AptixClient({
      baseUrl: url,
      retry: { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 3 },
    });
    const answer = await client.getSession("s1");
    expect(answer).toMatchObject({
      successful: false,
      errors: [{ code: "RATE_LIMITED", details: { retryAfterSeconds: 0 } }],
    });
    expect(arrivals).toHaveLength(3);
  });

  it("is retried whoever sends it: a proxy's 429 without an InvokeResult too", async () => {
    const proxy: Answer = (response) =>
      response.writeHead(429, { "content-type": "text/html", "retry-after": "0" }).end("<h1>Slow down</h1>");
    const { url, arrivals } = await answering([proxy, session]);
    const client = new AptixClient({ baseUrl: url, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    expect((await client.getSession("s1")).successful).toBe(true);
    expect(arrivals).toHaveLength(2);
  });

  it("is not retried when it is a spent budget: that frees up only at the budget's reset", async () => {
    const spent = json(
      429,
      {
        successful: false,
        errors: [
          {
            code: "BUDGET_EXCEEDED",
            message: "The tokensDaily budget is spent.",
            details: { budget: "tokensDaily", used: 10, limit: 10, resetsAt: "2026-03-11T00:00:00.000Z" },
          },
        ],
        warnings: [],
      },
      { "retry-after": "3600" },
    );
    const { url, arrivals } = await answering([spent, session]);
    const client = new AptixClient({ baseUrl: url, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    expect(await client.getSession("s1")).toMatchObject({
      successful: false,
      errors: [{ code: "BUDGET_EXCEEDED", details: { budget: "tokensDaily" } }],
    });
    expect(arrivals).toHaveLength(1);
  });

  it("stops waiting for its Retry-After as soon as the signal aborts", async () => {
    const { url, arrivals } = await answering([rateLimited(60), session]);
    const controller = new AbortController();
    // The real fetch; the test aborts once the 429 has come back, while the client waits out its 60 s (the
    // test's own timeout would catch a client that waited on).
    const client = new AptixClient({
      baseUrl: url,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        setImmediate(() => controller.abort());
        return response;
      },
    });
    await expect(client.getSession("s1", { signal: controller.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(arrivals).toHaveLength(1);
  });
});
