/**
 * The retention sweeps over real HTTP on both stores (docs/http-api.md): with `APTIX_SESSION_RETENTION_DAYS` a session
 * idle longer is deleted as `DELETE` deletes it, and with `APTIX_TRACE_RETENTION_DAYS` an older trace loses its
 * composed request and raw payloads but keeps its timing. The clock the test controls is the rows' own: it ages
 * them in the database (on Postgres while the service runs; on PGlite, whose database lives inside the service's
 * process, between a stop and a start on the same directory), and the service's housekeeping (every 250 ms with
 * a 1 s lease) finds them.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  checkAndResetHarness,
  databaseFor,
  expectFinal,
  postgresDriver,
  startTestService,
  type TestDatabase,
  type TestService,
  uniqueId,
  userTurn,
} from "../../src/e2e/index.js";

const RETENTION = {
  APTIX_LEASE_MS: "1000",
  APTIX_SESSION_RETENTION_DAYS: "2",
  APTIX_TRACE_RETENTION_DAYS: "1",
};

let harness: ScriptedOpenAI;

beforeAll(async () => {
  harness = await startScriptedOpenAI();
});

afterAll(async () => {
  await harness?.close();
});

/** PGlite as `@aptix/store-drizzle` resolves it, to open the service's directory while the service is stopped. */
async function openPglite(
  dir: string,
): Promise<{ exec(sql: string): Promise<unknown>; close(): Promise<void> }> {
  const fromStore = createRequire(
    createRequire(import.meta.url).resolve("@aptix/store-drizzle/package.json"),
  );
  const { PGlite } = (await import(fromStore.resolve("@electric-sql/pglite"))) as {
    PGlite: new (dir: string) => { exec(sql: string): Promise<unknown>; close(): Promise<void> };
  };
  return new PGlite(dir);
}

/** A database of `kind`, and how to run SQL on it with `service` running (which it may restart). */
async function agedDatabase(kind: "pglite" | "postgres") {
  if (kind === "postgres") {
    const database = await databaseFor("postgres");
    return {
      database,
      async age(service: TestService, statements: string[]): Promise<TestService> {
        const sql = postgresDriver()(database.url, { max: 1, onnotice: () => {}, fetch_types: false });
        try {
          for (const statement of statements)
            await sql.unsafe(statement.replaceAll("S.", `"${database.schema}".`));
        } finally {
          await sql.end({ timeout: 5 });
        }
        return service;
      },
    };
  }
  const dir = join(await mkdtemp(join(tmpdir(), "aptix-retention-")), "db");
  const database: TestDatabase = {
    kind,
    url: dir,
    env: { DATABASE_URL: dir },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
  return {
    database,
    async age(service: TestService, statements: string[]): Promise<TestService> {
      await service.close();
      const pglite = await openPglite(dir);
      try {
        for (const statement of statements) await pglite.exec(statement.replaceAll("S.", `"aptix".`));
      } finally {
        await pglite.close();
      }
      return startTestService({ store: kind, harness, database, env: RETENTION });
    },
  };
}

describe.each(["pglite", "postgres"] as const)("retention sweeps on %s", (kind) => {
  it("delete a session idle past APTIX_SESSION_RETENTION_DAYS, and prune traces older than APTIX_TRACE_RETENTION_DAYS", async () => {
    const { database, age } = await agedDatabase(kind);
    let service = await startTestService({ store: kind, harness, database, env: RETENTION });
    try {
      const idle = uniqueId("idle");
      const kept = uniqueId("kept");
      harness.script(step.text("Old answer."), step.text("Recent answer."));
      expectFinal(await service.post(userTurn(idle, "t1", "An old question")));
      expectFinal(await service.post(userTurn(kept, "t1", "A recent question")));
      const trace = async () =>
        (
          await service.get<{
            llmCalls: Array<{ request: unknown; providerRequest: unknown; durationMs: number }>;
          }>(`/v1/sessions/${kept}/turns/t1/trace`)
        ).body;
      const before = await trace();
      expect(before.successful && before.result.llmCalls[0]?.request).toBeTruthy();

      // Three days idle (past the two kept), and a trace two days old (past the one its payloads are kept).
      service = await age(service, [
        `update S.sessions set updated_at = now() - interval '3 days' where session_id = '${idle}'`,
        `update S.llm_calls set started_at = now() - interval '2 days' where session_id = '${kept}'`,
      ]);

      await vi.waitFor(
        async () => {
          expect((await service.get(`/v1/sessions/${idle}`)).status).toBe(404);
        },
        { timeout: 15_000, interval: 100 },
      );
      expect((await service.get(`/v1/sessions/${idle}/turns/t1/trace`)).status).toBe(404);
      // The recent session stays, and its aged trace keeps its timing without its payloads.
      expect((await service.get(`/v1/sessions/${kept}`)).status).toBe(200);
      await vi.waitFor(
        async () => {
          const after = await trace();
          expect(after.successful).toBe(true);
          const [call] = after.successful ? after.result.llmCalls : [];
          expect(call?.request ?? null).toBeNull();
          expect(call?.providerRequest ?? null).toBeNull();
          expect(call?.durationMs).toBeTypeOf("number");
        },
        { timeout: 15_000, interval: 100 },
      );
    } finally {
      await service.close();
      await database.dispose();
    }
    // After the test's own assertions, so a failure among them is the one reported.
    checkAndResetHarness(harness);
  });
});
