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
import { afterAll, describe, it } from "vitest";
import { type AptixStore, openPgliteStore, type PreparedPglite } from "../src/index.js";
import { expectSteadyStatementsPerTurn, LAST_TURN, STATEMENT_CHECKS } from "./support/agent-turns.js";
import { randomSchema, startedPglite } from "./support/databases.js";
import { storeInstances } from "./support/store-instances.js";

// One in-memory PGlite for the whole file (it takes seconds to start); each test gets a fresh schema in it.
let database: Promise<PreparedPglite> | undefined;

function sharedPglite(): Promise<PreparedPglite> {
  database ??= startedPglite();
  return database;
}

afterAll(async () => {
  await (await database)?.close();
});

async function openHarness(): Promise<{ store: AptixStore; clock: ManualClock; close(): Promise<void> }> {
  const client = await sharedPglite();
  const schema = randomSchema();
  const clock = new ManualClock();
  // The suites move the clock by hand: it stands in for the database's clock too.
  const store = await openPgliteStore(client, { schema, clock, leaseClock: clock });
  return {
    store,
    clock,
    async close() {
      await store.close();
      await client.exec(`drop schema "${schema}" cascade`);
    },
  };
}

/** The session stores of a fresh harness, for the session suites. */
async function sessionStores(): Promise<SessionStoresHarness> {
  const harness = await openHarness();
  const { sessions, files } = harness.store;
  return { store: sessions, files, clock: harness.clock, close: harness.close };
}

describeTurnStoreContract("drizzle on PGlite (in memory)", sessionStores);

describeTranscriptStoreContract("drizzle on PGlite (in memory)", sessionStores);
describeSessionDirectoryContract("drizzle on PGlite (in memory)", sessionStores);
describeUsageStoreContract("drizzle on PGlite (in memory)", sessionStores);
describeWebhookOutboxContract("drizzle on PGlite (in memory)", sessionStores);

describeTurnTransitionTable("drizzle on PGlite (in memory)", sessionStores);

describeFileStoreContract("drizzle on PGlite (in memory)", async () => {
  const harness = await openHarness();
  return { store: harness.store.files, clock: harness.clock, close: harness.close };
});

describeTurnEventLogContract("drizzle on PGlite (in memory)", async () => {
  const harness = await openHarness();
  return { log: harness.store.events, sessions: harness.store.sessions, close: harness.close };
});

// Leases judged by PGlite's now(): each instance is a store of its own over the same schema, with its own clock.
describeLeaseClockContract("drizzle on PGlite (in memory)", async () => {
  const client = await sharedPglite();
  const schema = randomSchema();
  return storeInstances(
    (clock) => openPgliteStore(client, { schema, clock }),
    async () => {
      await client.exec(`drop schema "${schema}" cascade`);
    },
  );
});

describe("statements per turn on PGlite", () => {
  it.each(STATEMENT_CHECKS)(
    `sends as many statements for turn ${LAST_TURN} of a session as for turn $baseline, with a provider $provider`,
    async (check) => {
      const client = await sharedPglite();
      const schema = randomSchema();
      try {
        await expectSteadyStatementsPerTurn(
          (options) => openPgliteStore(client, { ...options, schema }),
          check,
        );
      } finally {
        await client.exec(`drop schema "${schema}" cascade`);
      }
    },
    60_000,
  );
});
