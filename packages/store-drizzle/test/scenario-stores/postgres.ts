// Setup file of the "core scenarios on Postgres" project: every test agent of core's scenario suite gets a
// store on the machine's Postgres in a schema of its own, dropped when its test ends.
import type { ScenarioStoreFactory } from "@aptix/core/testing";
import { onTestFinished } from "vitest";
import { openStore } from "../../src/index.js";
import { adminSql, dropSchema, randomSchema, TEST_DATABASE_URL } from "../support/databases.js";

const scenarioStores: ScenarioStoreFactory = async (clock) => {
  await adminSql(); // Fails loudly with how to start Postgres when it is down.
  const schema = randomSchema();
  const store = await openStore(TEST_DATABASE_URL, { schema, clock, leaseClock: clock });
  onTestFinished(async () => {
    await store.close();
    await dropSchema(schema);
  });
  return { store: store.sessions, files: store.files, events: store.events };
};
globalThis.aptixScenarioStores = scenarioStores;
