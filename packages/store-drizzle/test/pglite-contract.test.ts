import {
  describeFileStoreContract,
  describeSessionStoreContract,
  describeTurnEventLogContract,
  ManualClock,
  type SessionStoreHarness,
} from "@aptix/core/testing";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, describe, expect, it } from "vitest";
import { type AptixStore, openPgliteStore } from "../src/index.js";
import { randomSchema } from "./support/databases.js";
import { persistTurn, STATEMENTS_PER_STEP, statementCounter } from "./support/turn-simulation.js";

// One in-memory PGlite for the whole file (it takes seconds to start); each test gets a fresh schema in it.
let database: Promise<PGlite> | undefined;

function sharedPglite(): Promise<PGlite> {
  database ??= PGlite.create();
  return database;
}

afterAll(async () => {
  await (await database)?.close();
});

async function openHarness(): Promise<{ store: AptixStore; clock: ManualClock; close(): Promise<void> }> {
  const client = await sharedPglite();
  const schema = randomSchema();
  const clock = new ManualClock();
  const store = await openPgliteStore(client, { schema, clock });
  return {
    store,
    clock,
    async close() {
      await store.close();
      await client.exec(`drop schema "${schema}" cascade`);
    },
  };
}

describeSessionStoreContract("drizzle on PGlite (in memory)", async (): Promise<SessionStoreHarness> => {
  const harness = await openHarness();
  return { store: harness.store.sessions, clock: harness.clock, close: harness.close };
});

describeFileStoreContract("drizzle on PGlite (in memory)", async () => {
  const harness = await openHarness();
  return { store: harness.store.files, clock: harness.clock, close: harness.close };
});

describeTurnEventLogContract("drizzle on PGlite (in memory)", async () => {
  const harness = await openHarness();
  return { log: harness.store.events, close: harness.close };
});

describe("statements per call on PGlite", () => {
  it("reports every statement, BEGIN and COMMIT included, as on Postgres, and as many for a later turn", async () => {
    const client = await sharedPglite();
    const schema = randomSchema();
    const clock = new ManualClock();
    const counter = statementCounter();
    const store = await openPgliteStore(client, { schema, clock, onQuery: counter.onQuery });
    try {
      const first = await counter.measure(store, clock, 1);
      for (let turn = 2; turn < 10; turn++) await persistTurn(store, clock, turn);
      expect(await counter.measure(store, clock, 10)).toStrictEqual(first);
      expect(first).toStrictEqual(STATEMENTS_PER_STEP);
    } finally {
      await store.close();
      await client.exec(`drop schema "${schema}" cascade`);
    }
  });
});
