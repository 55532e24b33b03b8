import { ScriptedLlmProvider } from "@aptix/core/testing";
import { afterAll, expect, it } from "vitest";
import { openStore } from "../src/index.js";
import { openPool, POOL_SIZE, STATEMENT_TIMEOUT_MS } from "../src/postgres-pool.js";
import { closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";
import { plainService } from "./support/plain-service.js";

afterAll(async () => {
  await closeAdmin();
});

const SESSIONS = 24;
const TURNS = 3;

it("serves many more sessions at once than the pool has connections, each turn once and in order", async () => {
  const schema = randomSchema();
  const store = await openStore(TEST_DATABASE_URL, { schema });
  try {
    const provider = new ScriptedLlmProvider({ id: "scripted" });
    for (let answer = 0; answer < SESSIONS * TURNS; answer++) provider.enqueue({ text: "Done." });
    // One principal runs every session at once: above the default running-turn cap.
    const service = plainService(store, provider, { maxRunningTurns: SESSIONS });
    // Every write of a turn is one statement on the pool (no transaction reserves a connection), pipelined onto
    // busy connections when all of them are taken.
    const failures = (
      await Promise.all(
        Array.from({ length: SESSIONS }, async (_, session) => {
          const failed: unknown[] = [];
          for (let turn = 1; turn <= TURNS; turn++) {
            const result = await service.execute(
              { sessionId: `s${session}`, turnId: `t${turn}`, instruction: `Turn ${turn}?` },
              "principal-a",
            );
            if (!result.successful) failed.push(result.errors);
          }
          return failed;
        }),
      )
    ).flat();
    expect(failures).toEqual([]);

    for (let session = 0; session < SESSIONS; session++) {
      const key = { principal: "principal-a", sessionId: `s${session}` };
      expect(await store.sessions.directory.getSession(key)).toMatchObject({
        turnCount: TURNS,
        openTurnId: null,
      });
      const turns = await store.sessions.directory.listTurns(key);
      expect(turns.map(({ turnId, sequence, status }) => ({ turnId, sequence, status }))).toEqual(
        Array.from({ length: TURNS }, (_, index) => ({
          turnId: `t${index + 1}`,
          sequence: index + 1,
          status: "completed",
        })),
      );
    }
  } finally {
    await store.close();
    await dropSchema(schema);
  }
});

it("counts its busy connections up to the pool's size, and none once its calls have settled", async () => {
  const schema = randomSchema();
  const store = await openStore(TEST_DATABASE_URL, { schema });
  try {
    expect(store.poolInUse()).toBe(0);
    const reads = Array.from({ length: POOL_SIZE + 2 }, (_, index) =>
      store.sessions.directory.getSession({ principal: "principal-a", sessionId: `s${index}` }),
    );
    // More calls at once than the pool has connections: all of them are busy, the other calls wait for one.
    expect(store.poolInUse()).toBe(POOL_SIZE);
    await Promise.all(reads);
    expect(store.poolInUse()).toBe(0);
  } finally {
    await store.close();
    await dropSchema(schema);
  }
});

it("cancels a statement of the pool that runs past its statement timeout (5 s by default)", async () => {
  expect(STATEMENT_TIMEOUT_MS).toBe(5_000);
  const pool = await openPool(TEST_DATABASE_URL, '"public"', {
    lz4: false,
    onQuery: undefined,
    statementTimeoutMs: 200,
  });
  try {
    const [setting] = await pool`show statement_timeout`;
    expect(setting?.statement_timeout).toBe("200ms");
    await expect(pool`select pg_sleep(2)`).rejects.toMatchObject({ code: "57014" });
    // The connection serves the next statement.
    expect(await pool`select 1 as one`).toEqual([{ one: 1 }]);
  } finally {
    await pool.end({ timeout: 5 });
  }
});
