/**
 * The client address behind a proxy, over real HTTP to the real server: with APTIX_TRUSTED_PROXIES naming
 * 127.0.0.1, a request from 127.0.0.1 is a proxy's, and its X-Forwarded-For names the client that limits count and
 * the access log names; a request from 127.0.0.2 is an untrusted caller's, whose X-Forwarded-For says nothing.
 * Wrong keys never lock a valid one out. In local mode, a proxy on this machine and a rebound name are refused 403
 * on every route.
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { API_KEYS, startTestService, type TestService } from "../../src/e2e/index.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

interface Answer {
  status: number;
  code: string | undefined;
  message: string | undefined;
  requestId: string;
}

/** A GET over real HTTP from `from` (any 127.x.x.x reaches a loopback listener), with `headers`. */
function get(
  service: TestService,
  path: string,
  options: { from?: string; key?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      `${service.url}${path}`,
      {
        localAddress: options.from ?? "127.0.0.1",
        agent: false,
        headers: {
          ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
          ...options.headers,
        },
      },
      async (response) => {
        let text = "";
        for await (const chunk of response) text += chunk;
        // Metrics, the API description and its page are not envelopes.
        const envelope = text.startsWith("{") ? (JSON.parse(text) as { errors?: unknown }) : {};
        const [error] = Array.isArray(envelope.errors)
          ? (envelope.errors as Array<{ code: string; message: string }>)
          : [];
        resolve({
          status: response.statusCode ?? 0,
          code: error?.code,
          message: error?.message,
          requestId: String(response.headers["x-request-id"]),
        });
      },
    );
    sent.on("error", reject);
    sent.end();
  });
}

/** The access line of the request answered with `requestId`. */
const accessLine = (service: TestService, requestId: string) =>
  service.logs.find((line) => line.message === "request" && line.requestId === requestId);

describe("behind a trusted proxy (APTIX_TRUSTED_PROXIES=127.0.0.1/32)", () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ store: "pglite", env: { APTIX_TRUSTED_PROXIES: "127.0.0.1/32" } });
  });

  afterAll(async () => {
    await service?.close();
  });

  /** A request the proxy forwards for `client` (its X-Forwarded-For). */
  const forwarded = (client: string, path: string, key: string) =>
    get(service, path, { key, headers: { "x-forwarded-for": client } });

  it("limits each forwarded client's failed authentications apart, logs its address, and serves its valid key", async () => {
    const guesser = "203.0.113.7";
    for (let i = 0; i < 20; i++) {
      expect((await forwarded(guesser, "/v1/modes", `wrong-key-${i}-0123456789`)).status).toBe(401);
    }
    const refused = await forwarded(guesser, "/v1/modes", "wrong-key-20-0123456789");
    expect(refused).toMatchObject({ status: 429, code: "RATE_LIMITED" });
    expect(accessLine(service, refused.requestId)).toMatchObject({ status: 429, clientAddress: guesser });

    // The other client behind the same proxy has failures of its own: none yet.
    const other = await forwarded("198.51.100.9", "/v1/modes", "wrong-key-0123456789");
    expect(other).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    expect(accessLine(service, other.requestId)).toMatchObject({ clientAddress: "198.51.100.9" });
    // A valid key is served, from the guesser's address too.
    expect((await forwarded("198.51.100.9", "/v1/modes", API_KEYS.bob)).status).toBe(200);
    const valid = await forwarded(guesser, "/v1/modes", API_KEYS.alice);
    expect(valid.status).toBe(200);
    expect(accessLine(service, valid.requestId)).toMatchObject({
      principal: "alice",
      clientAddress: guesser,
    });

    // What the guesser writes itself, left of what the proxy appended, changes nothing.
    const spoofed = await forwarded(`198.51.100.9, ${guesser}`, "/v1/modes", "wrong-key-0123456789");
    expect(spoofed).toMatchObject({ status: 429, code: "RATE_LIMITED" });
    expect(accessLine(service, spoofed.requestId)).toMatchObject({ clientAddress: guesser });
  });

  it("ignores the X-Forwarded-For of a caller that is not a trusted proxy", async () => {
    const untrusted = "127.0.0.2";
    for (let i = 0; i < 21; i++) {
      await get(service, "/v1/modes", {
        from: untrusted,
        key: `wrong-key-${i}-0123456789`,
        headers: { "x-forwarded-for": "192.0.2.55" },
      });
    }
    const answer = await get(service, "/v1/modes", {
      from: untrusted,
      key: "wrong-key-0123456789",
      headers: { "x-forwarded-for": "192.0.2.55" },
    });
    expect(answer.status).toBe(429);
    expect(accessLine(service, answer.requestId)).toMatchObject({ clientAddress: untrusted });
    // The address it named was not charged with its failures.
    expect((await forwarded("192.0.2.55", "/v1/modes", "wrong-key-0123456789")).status).toBe(401);
  });

  it.each([
    ["[2001:db8::7]:443", "2001:db8::7"],
    ["192.0.2.80:61000", "192.0.2.80"],
    ["unknown", "unknown"],
    ["192.0.2.81, not-an-address", "unknown"],
    ["127.0.0.1", "127.0.0.1"],
  ])("reads a forwarded %s as the client %s", async (header, client) => {
    const answer = await forwarded(header, "/v1/modes", API_KEYS.alice);
    expect(answer.status).toBe(200);
    expect(accessLine(service, answer.requestId)).toMatchObject({ clientAddress: client });
  });

  it("serves /metrics to a loopback caller that came straight, not to one a proxy forwards", async () => {
    expect((await get(service, "/metrics")).status).toBe(200);
    const throughProxy = await get(service, "/metrics", { headers: { "x-forwarded-for": "127.0.0.1" } });
    expect(throughProxy).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    expect((await get(service, "/metrics", { headers: { via: "1.1 proxy" } })).status).toBe(401);
  });
});

describe("local mode (APTIX_API_KEYS unset)", () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ store: "pglite", env: { APTIX_API_KEYS: "" } });
  });

  afterAll(async () => {
    await service?.close();
  });

  const ROUTES = ["/v1/modes", "/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"];

  it("serves this machine's user on every route", async () => {
    for (const path of ROUTES) expect((await get(service, path)).status, path).toBe(200);
  });

  it.each([
    ["Forwarded", { forwarded: "for=192.0.2.60" }],
    ["X-Forwarded-For", { "x-forwarded-for": "127.0.0.1" }],
    ["Via", { via: "1.1 localhost" }],
  ])(
    "refuses a request through a proxy on this machine (its %s header) 403 on every route",
    async (name, headers) => {
      for (const path of ROUTES) {
        const answer = await get(service, path, { headers });
        expect(answer, path).toEqual({
          status: 403,
          code: "FORBIDDEN",
          message: `This service runs in local mode and answers callers on this machine only: the request came through a proxy (its ${name} header), which forwards someone else.`,
          requestId: expect.any(String),
        });
        expect(accessLine(service, answer.requestId), path).toMatchObject({ status: 403, path: path });
      }
    },
  );

  it("refuses a rebound name (a Host that is not loopback) 403 on every route", async () => {
    for (const path of ROUTES) {
      const answer = await get(service, path, { headers: { host: "rebound.example:8787" } });
      expect(answer, path).toMatchObject({
        status: 403,
        code: "FORBIDDEN",
        message: expect.stringContaining('its Host header "rebound.example:8787" is not localhost'),
      });
    }
  });
});
