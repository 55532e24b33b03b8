// Setup file of the "core scenarios on PGlite" project: every test agent of core's scenario suite gets a fresh
// schema in one shared in-memory PGlite (one PGlite per test file; starting one takes seconds).
import type { ScenarioStoreFactory } from "@aptix/core/testing";
import { afterAll } from "vitest";
import { openPgliteStore, type PreparedPglite } from "../../src/index.js";
import { randomSchema, startedPglite } from "../support/databases.js";

let database: Promise<PreparedPglite> | undefined;

const scenarioStores: ScenarioStoreFactory = async (clock) => {
  database ??= startedPglite();
  // A PGlite has one connection and one search_path: each agent's store takes it over, one agent at a time.
  const store = await openPgliteStore(await database, { schema: randomSchema(), clock, leaseClock: clock });
  return { store: store.sessions, files: store.files, events: store.events };
};
globalThis.aptixScenarioStores = scenarioStores;

afterAll(async () => {
  await (await database)?.close();
});
