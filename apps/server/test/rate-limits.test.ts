import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readServerEnv } from "../src/config/server-env.js";
import { MAX_AUTH_FAILURES_PER_MINUTE } from "../src/http/middleware/auth-failure-limit.js";
import { MAX_FOLLOWERS_PER_PRINCIPAL, MAX_FOLLOWERS_PER_TURN } from "../src/http/routes/follower-slots.js";
import { silentLogger } from "../src/logging/silent-logger.js";
import { type RunningServer, startServer } from "../src/start-server.js";
import { HeldProvider } from "./held-provider.js";
import { setup } from "./http-app-setup.js";

const ALICE = "alice-key-0123456789";
const BOB = "bob-key-0123456789ab";
const CAROL = "carol-key-0123456789";
/** Low enough to reach in a test, high enough for the other tests' requests of alice's. */
const RPM = 50;

/** The server as main.ts wires it (embedded PGlite in memory), three principals, `openai` scripted. */
const provider = new HeldProvider({ id: "openai" });
let server: RunningServer;

// Opening the embedded PGlite takes seconds on a loaded machine: one server for the file.
beforeAll(async () => {
  server = await startServer(
    readServerEnv({
      PORT: "0",
      DATABASE_URL: "memory://",
      APTIX_API_KEYS: `alice:${ALICE},bob:${BOB},carol:${CAROL}`,
      APTIX_RATE_LIMIT_RPM: String(RPM),
      APTIX_SHUTDOWN_TIMEOUT_MS: "0",
    }),
    silentLogger,
    [provider],
  );
}, 120_000);

afterAll(async () => {
  await server?.close();
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** GET over real HTTP from `localAddress` (any 127.x.x.x reaches a loopback listener): a client of its own. */
function getFrom(localAddress: string, path: string, key: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      `${server.url}${path}`,
      { localAddress, agent: false, headers: { authorization: `Bearer ${key}` } },
      async (response) => {
        let text = "";
        for await (const chunk of response) text += chunk;
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) });
      },
    );
    sent.on("error", reject);
    sent.end();
  });
}

/** A 429 RATE_LIMITED whose Retry-After (whole seconds) is the body's `details.retryAfterSeconds`. */
function expectRateLimited(answer: Answer, message: RegExp): number {
  expect(answer.status).toBe(429);
  const retryAfter = Number(answer.headers["retry-after"]);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
  expect(answer.body).toEqual({
    successful: false,
    errors: [
      {
        code: "RATE_LIMITED",
        message: expect.stringMatching(message),
        details: { retryAfterSeconds: retryAfter },
      },
    ],
    warnings: [],
  });
  return retryAfter;
}

describe("the service's limits, over HTTP", () => {
  it("refuses a principal's requests past APTIX_RATE_LIMIT_RPM with 429 and runs none; others and /healthz go on", async () => {
    for (let i = 0; i < RPM; i++) {
      expect((await getFrom("127.0.0.1", "/v1/sessions/s1", CAROL)).status).toBe(404);
    }
    const turn = await fetch(`${server.url}/v1/agent/execute`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${CAROL}` },
      body: JSON.stringify({ sessionId: "s1", turnId: "t1", instruction: "Hi" }),
    });
    expectRateLimited(
      {
        status: turn.status,
        headers: { "retry-after": turn.headers.get("retry-after") ?? "" },
        body: await turn.json(),
      },
      /^Too many requests: this principal may send 50 a minute \(APTIX_RATE_LIMIT_RPM\); try again in \d+ s\.$/,
    );
    expect(provider.requests).toHaveLength(0);
    expectRateLimited(await getFrom("127.0.0.1", "/v1/sessions/s1", CAROL), /APTIX_RATE_LIMIT_RPM/);

    // Another principal, from the same address, has its own count; health checks count for nobody.
    expect((await getFrom("127.0.0.1", "/v1/sessions/s1", BOB)).status).toBe(404);
    for (let i = 0; i < 5; i++) {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    }
  });

  it("answers a client address's failed authentications 429 past 20 a minute, yet serves its valid keys; other addresses go on", async () => {
    const guesser = "127.0.0.2";
    for (let i = 0; i < MAX_AUTH_FAILURES_PER_MINUTE; i++) {
      const wrong = await getFrom(guesser, "/v1/sessions/s1", `wrong-key-${i}-0123456789`);
      expect(wrong.status).toBe(401);
      expect(wrong.headers["www-authenticate"]).toBe('Bearer realm="aptix"');
    }
    const refused = await getFrom(guesser, "/v1/sessions/s1", "wrong-key-21-0123456789");
    expectRateLimited(
      refused,
      /^Too many failed authentications from this address: at most 20 a minute; try again in \d+ s\.$/,
    );
    expect(refused.headers["www-authenticate"]).toBeUndefined();
    // Tenants behind one address (a NAT, a proxy) are not locked out by someone else's guessing.
    expect((await getFrom(guesser, "/v1/sessions/s1", ALICE)).status).toBe(404);
    expectRateLimited(await getFrom(guesser, "/v1/sessions/s1", "no-such-key-0123456789"), /failed auth/);

    const neighbour = "127.0.0.3";
    expect((await getFrom(neighbour, "/v1/sessions/s1", ALICE)).status).toBe(404);
    expect((await getFrom(neighbour, "/v1/sessions/s1", "wrong-key-0123456789")).status).toBe(401);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("serves a valid key after 300 wrong ones from its address", async () => {
    const address = "127.0.0.4";
    const statuses = new Map<number, number>();
    for (let i = 0; i < 300; i++) {
      const { status } = await getFrom(address, "/v1/modes", `wrong-key-${i}-0123456789`);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 401: MAX_AUTH_FAILURES_PER_MINUTE, 429: 280 });
    const valid = await getFrom(address, "/v1/modes", BOB);
    expect(valid.status).toBe(200);
    expect(valid.body).toMatchObject({ successful: true, result: { defaultModeId: "general" } });
  });

  it("refuses a turn's ninth follower 429, and lets the next one take a slot a follower left", async () => {
    provider.enqueue({ text: "Done." });
    const held = provider.hold();
    const streamed = await fetch(`${server.url}/v1/agent/execute`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ALICE}` },
      body: JSON.stringify({ sessionId: "s1", turnId: "t1", instruction: "Hi", stream: true }),
    });
    expect(streamed.status).toBe(200);
    await held.entered;

    const follow = (signal?: AbortSignal) =>
      fetch(`${server.url}/v1/sessions/s1/turns/t1/events`, {
        headers: { authorization: `Bearer ${ALICE}` },
        ...(signal ? { signal } : {}),
      });
    const leaving = new AbortController();
    const followers = [await follow(leaving.signal)];
    for (let i = 1; i < MAX_FOLLOWERS_PER_TURN; i++) followers.push(await follow());
    expect(followers.map((response) => response.status)).toEqual(Array(MAX_FOLLOWERS_PER_TURN).fill(200));

    const ninth = await follow();
    expect(ninth.headers.get("retry-after")).toBe("5");
    expect({ status: ninth.status, body: await ninth.json() }).toEqual({
      status: 429,
      body: {
        successful: false,
        errors: [
          {
            code: "RATE_LIMITED",
            message: "This turn already has 8 followers; try again in 5 s.",
            details: { retryAfterSeconds: 5 },
          },
        ],
        warnings: [],
      },
    });

    // The slot frees once the server has seen the first follower's connection close.
    leaving.abort();
    let next = await follow();
    for (const deadline = Date.now() + 10_000; next.status === 429 && Date.now() < deadline; ) {
      await next.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 20));
      next = await follow();
    }
    expect(next.status).toBe(200);
    const tenth = await follow();
    expect(tenth.status).toBe(429);
    await tenth.body?.cancel();

    held.release();
    for (const response of [streamed, ...followers.slice(1), next]) {
      expect(await response.text()).toContain('"primaryOutputText":"Done."');
    }
  });
});

describe("followers of one principal", () => {
  it("refuses a principal's 33rd follower on an instance 429 whatever its turn, lets another principal follow, and frees a slot as a follower leaves", async () => {
    const provider = new HeldProvider({ id: "scripted" });
    const { app, post } = setup({ provider });
    const alice = { authorization: `Bearer ${ALICE}` };
    // Running turns, each followed by as many clients as one turn may have: 32 streams open in all.
    const turns = MAX_FOLLOWERS_PER_PRINCIPAL / MAX_FOLLOWERS_PER_TURN + 1;
    const releases: Array<() => void> = [];
    for (let i = 0; i < turns; i++) {
      provider.enqueue({ text: `Done ${i}.` });
      const held = provider.hold();
      expect((await post({ sessionId: `s${i}`, turnId: "t1", instruction: "Hi", stream: true })).status).toBe(
        200,
      );
      await held.entered;
      releases.push(held.release);
    }
    const follow = (session: number, headers = alice) =>
      app.request(`/v1/sessions/s${session}/turns/t1/events`, { headers });
    const followers: Response[] = [];
    for (let i = 0; i < MAX_FOLLOWERS_PER_PRINCIPAL; i++) followers.push(await follow(i % (turns - 1)));
    expect(followers.every((response) => response.status === 200)).toBe(true);

    // The last turn has no follower yet: the principal's limit refuses it, naming that limit.
    const refused = await follow(turns - 1);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect({ status: refused.status, body: await refused.json() }).toEqual({
      status: 429,
      body: {
        successful: false,
        errors: [
          {
            code: "RATE_LIMITED",
            message: `This principal already has ${MAX_FOLLOWERS_PER_PRINCIPAL} followers on this instance; try again in 5 s.`,
            details: { retryAfterSeconds: 5 },
          },
        ],
        warnings: [],
      },
    });

    // Another principal's followers are counted apart (bob follows his own turn).
    provider.enqueue({ text: "Bob's." });
    const bobs = provider.hold();
    const bob = { authorization: `Bearer ${BOB}` };
    const bobTurn = await post({ sessionId: "s0", turnId: "t1", instruction: "Hi", stream: true }, BOB);
    await bobs.entered;
    const bobFollows = await follow(0, bob);
    expect(bobFollows.status).toBe(200);

    // A follower that leaves frees its slot at once.
    await followers.shift()?.body?.cancel();
    const next = await follow(turns - 1);
    expect(next.status).toBe(200);
    followers.push(next);

    bobs.release();
    for (const release of releases) release();
    for (const response of [...followers, bobFollows, bobTurn]) {
      expect(await response.text()).toMatch(/"primaryOutputText":"(Done \d|Bob's)\."/);
    }
  });
});

describe("failed authentication in local mode", () => {
  it("is not counted: a page refused for its Origin cannot lock the machine's own user out", async () => {
    const { get, app } = setup({ apiKeys: new Map() });
    for (let i = 0; i <= MAX_AUTH_FAILURES_PER_MINUTE; i++) {
      const refused = await app.request("/v1/sessions/s1", { headers: { origin: "https://evil.example" } });
      expect(refused.status).toBe(403);
    }
    expect((await get("/v1/sessions/s1")).status).toBe(404);
  });
});
