import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createRequire } from "node:module";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import type { LlmCallOptions, LlmRequest } from "@aptix/core";
import { ScriptedLlmProvider } from "@aptix/core/testing";
import { type AptixStore, openStore } from "@aptix/store-drizzle";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readServerEnv } from "../src/config/server-env.js";
import { type RunningServer, startServer } from "../src/start-server.js";
import { capturedLog } from "./captured-log.js";
import { setup } from "./http-app-setup.js";

/** The machine's Postgres, as the store tests use it. */
const POSTGRES_URL = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";

/** A scripted provider whose calls can be held: `hold()` returns what lets the next call answer. */
function gatedProvider() {
  const provider = new ScriptedLlmProvider({ id: "scripted" });
  const answer = provider.call.bind(provider);
  let gate: Promise<void> | undefined;
  let entered: (() => void) | undefined;
  provider.call = async (request: LlmRequest, options?: LlmCallOptions) => {
    const held = gate;
    gate = undefined;
    entered?.();
    if (held) await held;
    return answer(request, options);
  };
  const hold = () => {
    let release!: () => void;
    gate = new Promise((resolve) => {
      release = resolve;
    });
    const reached = new Promise<void>((resolve) => {
      entered = resolve;
    });
    return { entered: reached, release };
  };
  return { provider, hold };
}

/**
 * A TCP proxy in front of Postgres, the store's only way to it: `cut()` closes every connection and stops
 * listening (a database gone away: connections drop, new ones are refused); `restore()` listens again.
 */
async function postgresProxy(target: URL) {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 5432) });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no port");
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(address.port);
  return {
    url: url.toString(),
    async cut() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    async restore() {
      server.listen(address.port, "127.0.0.1");
      await once(server, "listening");
    },
    async close() {
      if (server.listening) await new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** postgres.js as `@aptix/store-drizzle` resolves it, borrowed to drop the test's schema. */
async function dropSchema(schema: string): Promise<void> {
  const fromStore = createRequire(
    createRequire(import.meta.url).resolve("@aptix/store-drizzle/package.json"),
  );
  const postgres = fromStore("postgres") as (
    url: string,
    options: Record<string, unknown>,
  ) => { unsafe(query: string): Promise<unknown>; end(options: { timeout: number }): Promise<void> };
  const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

describe("SESSION_BUSY", () => {
  it("carries a short Retry-After", async () => {
    const { provider, hold } = gatedProvider();
    provider.enqueue({ text: "Done." });
    const { post } = setup({ provider });
    const held = hold();
    const running = post({ sessionId: "s", turnId: "t1", instruction: "Take your time" });
    await held.entered;
    for (const turnId of ["t2", "t1"]) {
      const busy = await post({ sessionId: "s", turnId, instruction: "Take your time" });
      expect(busy.status).toBe(409);
      expect(((await busy.json()) as { errors: Array<{ code: string }> }).errors[0]?.code).toBe(
        "SESSION_BUSY",
      );
      expect(busy.headers.get("retry-after")).toBe("1");
    }
    held.release();
    expect((await running).status).toBe(200);
    expect((await running).headers.get("retry-after")).toBeNull();
  });
});

describe("a database outage", () => {
  const schema = `aptix_outage_${randomBytes(6).toString("hex")}`;
  let proxy: Awaited<ReturnType<typeof postgresProxy>>;
  let store: AptixStore;

  beforeAll(async () => {
    proxy = await postgresProxy(new URL(POSTGRES_URL));
    store = await openStore(proxy.url, { schema });
  });

  afterAll(async () => {
    await store?.close();
    await proxy?.close();
    await dropSchema(schema);
  });

  async function expectNotReady(response: Response) {
    expect({ status: response.status, body: await response.json() }).toMatchObject({
      status: 503,
      body: { successful: false, errors: [{ code: "NOT_READY", details: { retryable: true } }] },
    });
    expect(response.headers.get("retry-after")).toBe("5");
  }

  it("answers 503 NOT_READY with Retry-After on /v1/*, fails the turn it cut short, and passes once it is back", async () => {
    const { provider, hold } = gatedProvider();
    provider.enqueue({ text: "Hello." }, { text: "Cut short." });
    const { post, get } = setup({
      provider,
      store: store.sessions,
      files: store.files,
      events: store.events,
    });
    expect((await post({ sessionId: "s", turnId: "t1", instruction: "Hi" })).status).toBe(200);

    const held = hold();
    const cutShort = post({ sessionId: "s", turnId: "t2", instruction: "Meanwhile" });
    await held.entered;
    await proxy.cut();
    held.release();
    await expectNotReady(await cutShort);

    await expectNotReady(await post({ sessionId: "s", turnId: "t3", instruction: "Again" }));
    await expectNotReady(await post({ sessionId: "s", turnId: "t3", instruction: "Again", stream: true }));
    await expectNotReady(await post({ sessionId: "new", turnId: "t1", instruction: "Hi" }));
    await expectNotReady(await get("/v1/sessions/s"));
    await expectNotReady(await get("/v1/sessions/s/turns/t1/trace"));
    // Each failure lengthens the pool's wait before it connects again: capped, so a long outage is still
    // answered promptly, and served again soon after it ends.
    for (let attempt = 0; attempt < 10; attempt++) await expectNotReady(await get("/v1/sessions/s"));
    expect((await store.readiness()).ready).toBe(false);

    await proxy.restore();
    const session = await get("/v1/sessions/s");
    expect(session.status).toBe(200);
    expect(((await session.json()) as { result: { turns: unknown[] } }).result.turns).toMatchObject([
      { turnId: "t1", status: "completed" },
      { turnId: "t2" },
    ]);
    expect((await store.readiness()).ready).toBe(true);
    // About 2 s here; with postgres.js's own delays (growing to 20 s each) far longer.
  }, 15_000);
});

describe("readiness through a database outage", () => {
  const schema = `aptix_ready_${randomBytes(6).toString("hex")}`;
  let proxy: Awaited<ReturnType<typeof postgresProxy>>;
  let server: RunningServer | undefined;
  const { logger, lines: logged } = capturedLog();

  beforeAll(async () => {
    proxy = await postgresProxy(new URL(POSTGRES_URL));
    const env = readServerEnv({ PORT: "0", DATABASE_URL: proxy.url, APTIX_DATABASE_SCHEMA: schema });
    server = await startServer(env, logger, [new ScriptedLlmProvider({ id: "openai" })]);
    // No time limit: the start either listens or throws, however busy the machine.
  }, 0);

  afterAll(async () => {
    await server?.close();
    await proxy?.close();
    await dropSchema(schema);
  });

  const readyz = async () => {
    const response = await fetch(`${server?.url}/readyz`);
    return { status: response.status, text: await response.text() };
  };

  it("names the database, and no host, port or driver message, until it is back; the log has the detail", async () => {
    expect(await readyz()).toMatchObject({ status: 200, text: expect.stringContaining('"status":"ready"') });
    await proxy.cut();
    // The background check asks the database every few seconds.
    const down = await vi.waitFor(
      async () => {
        const answer = await readyz();
        expect(answer.status).toBe(503);
        return answer;
      },
      { timeout: 30_000, interval: 200 },
    );
    expect(JSON.parse(down.text)).toMatchObject({
      errors: [{ code: "NOT_READY", message: "Not ready: database is unavailable" }],
    });
    expect(down.text).not.toMatch(new RegExp(`127\\.0\\.0\\.1|${new URL(proxy.url).port}|ECONN|unreachable`));
    expect(logged).toContainEqual(
      expect.objectContaining({ message: "not ready", down: ["database"], database: expect.any(String) }),
    );

    await proxy.restore();
    await vi.waitFor(async () => expect((await readyz()).status).toBe(200), {
      timeout: 30_000,
      interval: 200,
    });
    expect(logged).toContainEqual(expect.objectContaining({ message: "ready" }));
  }, 90_000);
});
