import { ScriptedLlmProvider } from "@aptix/core/testing";
import { afterAll, expect, it } from "vitest";
import { openStore } from "../src/index.js";
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
    // A session's first turn claims in a transaction (a reserved connection); its later turns send one
    // statement on the pool, pipelined onto busy connections: both kinds run side by side here.
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
      expect(await store.sessions.getSession(key)).toMatchObject({ turnCount: TURNS, openTurnId: null });
      const turns = await store.sessions.listTurns(key);
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
