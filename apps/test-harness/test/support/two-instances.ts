import type { ScriptedOpenAI } from "@aptix/testing-llm-servers";
import { afterAll, beforeAll } from "vitest";
import { startTestService, type TestService } from "../../src/e2e/index.js";

export interface TwoInstances {
  first: TestService;
  second: TestService;
}

/**
 * Two server instances on one Postgres database (the same `DATABASE_URL` and schema), talking to `harness()`:
 * started before the tests of the file or `describe` that calls this, closed after them (the second first).
 * Their fields are there from the first test on.
 */
export function useTwoInstances(harness: () => ScriptedOpenAI, env?: Record<string, string>): TwoInstances {
  const instances = {} as TwoInstances;
  beforeAll(async () => {
    instances.first = await startTestService({ store: "postgres", harness: harness(), env });
    instances.second = await startTestService({
      store: "postgres",
      harness: harness(),
      database: instances.first.database,
      env,
    });
  });
  afterAll(async () => {
    await instances.second?.close();
    await instances.first?.close();
  });
  return instances;
}
