import { once } from "node:events";
import { type AddressInfo, createServer, type Socket, connect as tcpConnect } from "node:net";
import { newLease, newSessionKey, ScriptedLlmProvider } from "@aptix/core/testing";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { afterAll, describe, expect, it } from "vitest";
import { type AptixStore, MIGRATIONS_FOLDER, openStore, type StoreStep } from "../src/index.js";
import { expectSteadyStatementsPerTurn, LAST_TURN, STATEMENT_CHECKS } from "./support/agent-turns.js";
import { adminSql, closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";
import { plainService } from "./support/plain-service.js";

afterAll(async () => {
  await closeAdmin();
});

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

describe("statements per turn on Postgres", () => {
  it.each(STATEMENT_CHECKS)(
    `sends as many statements for turn ${LAST_TURN} of a session as for turn $baseline, with a provider $provider`,
    async (check) => {
      await withSchema(async (schema) => {
        await expectSteadyStatementsPerTurn(
          (options) => openStore(TEST_DATABASE_URL, { ...options, schema }),
          check,
        );
      });
    },
    60_000,
  );
});

describe("a turn's trace on Postgres", () => {
  it("is compressed with lz4 when the server offers it, else with Postgres's default", async () => {
    await withSchema(async (schema) => {
      const sql = await adminSql();
      const [offered] = await sql`
        select 'lz4' = any(enumvals) as "lz4" from pg_settings where name = 'default_toast_compression'`;
      const store = await openStore(TEST_DATABASE_URL, { schema });
      try {
        const provider = new ScriptedLlmProvider();
        // A long answer: its trace is compressed as it is stored (values over about 2 KB are).
        provider.enqueue({ text: "All done. ".repeat(1_000) });
        const turn = await plainService(store, provider).execute(
          { sessionId: "compressed", turnId: "turn-1", instruction: "Go." },
          "principal-a",
        );
        expect(turn.successful).toBe(true);
        const [row] = await sql.unsafe(
          `select pg_column_compression("response") as method from "${schema}"."llm_calls"`,
        );
        expect(row?.method).toBe(offered?.lz4 === true ? "lz4" : "pglz");
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

describe("the steps of opening on Postgres", () => {
  it("are the migration only, told as it starts and with its duration once done", async () => {
    await withSchema(async (schema) => {
      const steps: StoreStep[] = [];
      const store = await openStore(TEST_DATABASE_URL, { schema, onStep: (step) => steps.push(step) });
      await store.close();
      expect(steps).toEqual([{ name: "migrate" }, { name: "migrate", durationMs: expect.any(Number) }]);
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
          "compactions",
          "deployment_secrets",
          "file_holders",
          "files",
          "llm_calls",
          "llm_usage",
          "mode_history",
          "response_deletions",
          "sessions",
          "tool_catalogs",
          "transcript_items",
          "turn_events",
          "turns",
          "usage_days",
          "usage_session_days",
          "webhook_deliveries",
          "workspace_chunks",
          "workspace_documents",
          "workspace_embeddings",
          "workspace_terms",
          "workspaces",
        ]);

        expect(await a.readiness()).toStrictEqual({ ready: true });
        expect(await b.readiness()).toStrictEqual({ ready: true });
        const key = newSessionKey("shared-session");
        const now = new Date();
        const create = { conversationContextId: "conv", agentContextId: null, mode: "code" };
        const claimed = await a.sessions.turns.write({
          guard: "create",
          key,
          lease: newLease("owner-a", 60_000),
          now,
          create,
        });
        expect(claimed.outcome).toBe("applied");
        const shared = await b.sessions.directory.getSession(key);
        expect(shared?.mode).toBe("code");
        const write = {
          guard: "version",
          key,
          lease: newLease("owner-b", 60_000),
          now,
          expectVersion: shared?.version ?? 0,
        } as const;
        expect((await b.sessions.turns.write(write)).outcome).toBe("busy");
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
