import { once } from "node:events";
import { type AddressInfo, createServer, type Socket, connect as tcpConnect } from "node:net";
import { ManualClock, newLease, newSessionKey } from "@aptix/core/testing";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { type AptixStore, MIGRATIONS_FOLDER, openStore, type StoreDatabase } from "../src/index.js";
import { adminSql, closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";
import { STATEMENTS_PER_STEP, seedTurns, statementCounter } from "./support/turn-simulation.js";

afterAll(async () => {
  await closeAdmin();
});

/** Runs `work` on a drizzle database whose unqualified tables are those of `schema`. */
async function seed(schema: string, work: (db: StoreDatabase) => Promise<void>): Promise<void> {
  const client = postgres(TEST_DATABASE_URL, {
    max: 1,
    connection: { search_path: schema },
    onnotice: () => {},
  });
  try {
    await work(drizzle(client));
  } finally {
    await client.end({ timeout: 5 });
  }
}

/** Opens a store in a fresh schema and drops the schema when `work` is done. */
async function withSchema(work: (schema: string) => Promise<void>): Promise<void> {
  await adminSql(); // Fails the test, loudly, when Postgres is down.
  const schema = randomSchema();
  try {
    await work(schema);
  } finally {
    await dropSchema(schema);
  }
}

describe("statements per call on Postgres", () => {
  it("sends as many statements for turn 200 of a session as for turn 1", async () => {
    await withSchema(async (schema) => {
      const clock = new ManualClock();
      const counter = statementCounter();
      const store = await openStore(TEST_DATABASE_URL, { schema, clock, onQuery: counter.onQuery });
      try {
        const first = await counter.measure(store, clock, 1);
        await seed(schema, async (db) => {
          await seedTurns(db, 2, 199);
        });
        const session = await store.sessions.getSession(newSessionKey("session-long", "principal-a"));
        expect(session?.turnCount).toBe(199);
        expect(session?.cursor.transcriptLength).toBe(199 * 4);
        const last = await counter.measure(store, clock, 200);

        expect(last).toStrictEqual(first);
        // The constants documented on DrizzleSessionStore (BEGIN and COMMIT included).
        expect(first).toStrictEqual(STATEMENTS_PER_STEP);
        expect((await store.sessions.listTurns(newSessionKey("session-long", "principal-a"))).length).toBe(
          200,
        );
      } finally {
        await store.close();
      }
    });
  });
});

describe("readiness on Postgres", () => {
  it("is ready after open and not ready, with a reason, once the store is closed", async () => {
    await withSchema(async (schema) => {
      const store = await openStore(TEST_DATABASE_URL, { schema });
      expect(await store.readiness()).toStrictEqual({ ready: true });
      await store.close();
      const after = await store.readiness();
      expect(after.ready).toBe(false);
      expect(after.reason).toMatch(/closed/);
      await store.close(); // A second close is a no-op.
    });
  });

  it("is not ready, with a reason, while the database is unreachable, and ready again when it is back", async () => {
    await withSchema(async (schema) => {
      const proxy = await startProxy(new URL(TEST_DATABASE_URL));
      const store = await openStore(proxy.url, { schema });
      try {
        expect(await store.readiness()).toStrictEqual({ ready: true });
        await proxy.stop();
        const down = await store.readiness();
        expect(down.ready).toBe(false);
        expect(down.reason).toMatch(/unreachable/i);
        await proxy.restart();
        expect(await store.readiness()).toStrictEqual({ ready: true });
      } finally {
        await store.close();
        await proxy.stop();
      }
    });
  });

  it("is not ready while a shipped migration is missing from the database", async () => {
    await withSchema(async (schema) => {
      const store = await openStore(TEST_DATABASE_URL, { schema });
      try {
        const sql = await adminSql();
        await sql.unsafe(`delete from "${schema}"."__drizzle_migrations"`);
        const readiness = await store.readiness();
        expect(readiness.ready).toBe(false);
        expect(readiness.reason).toMatch(/not applied/);
      } finally {
        await store.close();
      }
    });
  });
});

describe("the schema option", () => {
  it("refuses a schema name that is not a plain identifier, before connecting", async () => {
    for (const schema of ['a"b', "1abc", "with space", "", "x".repeat(64)]) {
      await expect(openStore("postgres://nobody@127.0.0.1:1/none", { schema })).rejects.toThrow(
        /Invalid store schema/,
      );
      await expect(openStore("memory://", { schema })).rejects.toThrow(/Invalid store schema/);
    }
  });
});

describe("opening one schema from two processes at once", () => {
  it("migrates once, and both stores work on the same data", async () => {
    await withSchema(async (schema) => {
      const statements: string[][] = [[], []];
      const urls = [TEST_DATABASE_URL, TEST_DATABASE_URL.replace(/^postgres:/, "postgresql:")];
      const [a, b] = (await Promise.all(
        urls.map((url, index) => openStore(url, { schema, onQuery: (sql) => statements[index]?.push(sql) })),
      )) as [AptixStore, AptixStore];
      try {
        const created = statements.map((sent) => sent.some((sql) => /create table "sessions"/i.test(sql)));
        expect(created.filter(Boolean)).toHaveLength(1);
        const sql = await adminSql();
        const applied = await sql.unsafe(`select hash, created_at from "${schema}"."__drizzle_migrations"`);
        expect(applied).toHaveLength(readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).length);
        const tables =
          await sql`select table_name from information_schema.tables where table_schema = ${schema} order by 1`;
        expect(tables.map((row) => row.table_name)).toEqual([
          "__drizzle_migrations",
          "files",
          "llm_calls",
          "mode_history",
          "sessions",
          "transcript_items",
          "turn_events",
          "turns",
        ]);

        expect(await a.readiness()).toStrictEqual({ ready: true });
        expect(await b.readiness()).toStrictEqual({ ready: true });
        const key = newSessionKey("shared-session");
        const now = new Date();
        const claim = (owner: string) => ({
          key,
          lease: newLease(owner, new Date(now.getTime() + 60_000)),
          now,
          create: { conversationContextId: "conv", agentContextId: null, mode: "code" },
        });
        expect((await a.sessions.claimSession(claim("owner-a"))).outcome).toBe("claimed");
        expect((await b.sessions.claimSession(claim("owner-b"))).outcome).toBe("busy");
        expect((await b.sessions.getSession(key))?.mode).toBe("code");
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });
  });
});

/** A TCP proxy in front of Postgres that can be taken down (connections cut, port refused) and brought back. */
async function startProxy(target: URL) {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    async stop() {
      if (!server.listening) return;
      const closed = once(server, "close");
      server.close();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    async restart() {
      server.listen(port, "127.0.0.1");
      await once(server, "listening");
    },
  };
}
