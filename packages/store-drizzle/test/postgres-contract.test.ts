import { ManualClock } from "@aptix/core/testing";
import {
  describeFileStoreContract,
  describeLeaseClockContract,
  describeSessionDirectoryContract,
  describeTranscriptStoreContract,
  describeTurnEventLogContract,
  describeTurnStoreContract,
  describeTurnTransitionTable,
  describeUsageStoreContract,
  describeWebhookOutboxContract,
  type SessionStoresHarness,
} from "@aptix/testing-stores";
import { afterAll } from "vitest";
import { type AptixStore, openStore } from "../src/index.js";
import { adminSql, closeAdmin, dropSchema, randomSchema, TEST_DATABASE_URL } from "./support/databases.js";
import { storeInstances } from "./support/store-instances.js";

afterAll(async () => {
  await closeAdmin();
});

/** The current test's second connection: a second store (its own postgres.js pool) over the same schema. */
let secondConnection: (() => Promise<AptixStore>) | undefined;

async function openHarness(): Promise<{ store: AptixStore; clock: ManualClock; close(): Promise<void> }> {
  await adminSql(); // Fails the test, loudly, when Postgres is down.
  const schema = randomSchema();
  const clock = new ManualClock();
  // The suites move the clock by hand: it stands in for the database's clock too.
  const store = await openStore(TEST_DATABASE_URL, { schema, clock, leaseClock: clock });
  const others: AptixStore[] = [];
  secondConnection = async () => {
    const other = await openStore(TEST_DATABASE_URL, { schema, clock, leaseClock: clock });
    others.push(other);
    return other;
  };
  return {
    store,
    clock,
    async close() {
      secondConnection = undefined;
      await Promise.all([store, ...others].map((opened) => opened.close()));
      await dropSchema(schema);
    },
  };
}

/** The session stores of a fresh harness, for the session suites. */
async function sessionStores(): Promise<SessionStoresHarness> {
  const harness = await openHarness();
  const { sessions, files } = harness.store;
  return { store: sessions, files, clock: harness.clock, close: harness.close };
}

describeTurnStoreContract("drizzle on Postgres (postgres.js)", sessionStores, {
  newConnection: async () => {
    if (secondConnection === undefined) throw new Error("newConnection called outside a test");
    return (await secondConnection()).sessions;
  },
});

describeTranscriptStoreContract("drizzle on Postgres (postgres.js)", sessionStores);
describeSessionDirectoryContract("drizzle on Postgres (postgres.js)", sessionStores);
describeUsageStoreContract("drizzle on Postgres (postgres.js)", sessionStores);
describeWebhookOutboxContract("drizzle on Postgres (postgres.js)", sessionStores);

describeTurnTransitionTable("drizzle on Postgres (postgres.js)", sessionStores);

describeFileStoreContract("drizzle on Postgres (postgres.js)", async () => {
  const harness = await openHarness();
  return { store: harness.store.files, clock: harness.clock, close: harness.close };
});

describeTurnEventLogContract("drizzle on Postgres (postgres.js)", async () => {
  const harness = await openHarness();
  return { log: harness.store.events, sessions: harness.store.sessions, close: harness.close };
});

// Leases judged by Postgres's now(): each instance is a store (its own pool) over one schema, with its own clock.
describeLeaseClockContract("drizzle on Postgres (postgres.js)", async () => {
  await adminSql();
  const schema = randomSchema();
  return storeInstances(
    (clock) => openStore(TEST_DATABASE_URL, { schema, clock }),
    () => dropSchema(schema),
  );
});
