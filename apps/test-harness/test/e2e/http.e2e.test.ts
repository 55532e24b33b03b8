/**
 * End-to-end scenarios over real HTTP: the real Hono server of `startServer`, its real OpenAIResponsesProvider
 * (the `openai` SDK over HTTP to the scripted harness) and the real store, once on PGlite in memory and once on
 * the machine's Postgres (a schema per service). The scenarios live in ./scenarios; this file runs them per
 * store against services it starts once, because starting a PGlite costs seconds.
 */

import { type ScriptedOpenAI, startScriptedOpenAI } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  checkAndResetHarness,
  E2E_STORES,
  startTestService,
  type TestService,
  type TestStoreKind,
} from "../../src/e2e/index.js";
import { useTwoInstances } from "../support/two-instances.js";
import { type ScenarioContext, STRICT_TIMEOUT_MS } from "./scenarios/context.js";
import { conversationScenarios } from "./scenarios/conversation.js";
import { expectSerialized, oneTurnAtATimeScenarios } from "./scenarios/one-turn-at-a-time.js";
import { providerFailureScenarios } from "./scenarios/provider-failures.js";
import { requestAndAccessScenarios } from "./scenarios/requests-and-access.js";

// Real servers and databases: generous limits (the whole e2e run stays well under 2 minutes).

let harness: ScriptedOpenAI;

beforeAll(async () => {
  harness = await startScriptedOpenAI();
});

afterAll(async () => {
  await harness?.close();
});

// After every test: each request the harness received passed the official CreateResponse schema, and no
// scripted step was left over.
afterEach(() => {
  checkAndResetHarness(harness);
});

describe.each(E2E_STORES)("%s store", (store: TestStoreKind) => {
  let service: TestService | undefined;
  let strict: TestService | undefined;
  const ctx: ScenarioContext = {
    store,
    get harness() {
      return harness;
    },
    get service() {
      if (!service) throw new Error("the service did not start");
      return service;
    },
    get strict() {
      if (!strict) throw new Error("the strict service did not start");
      return strict;
    },
  };

  beforeAll(async () => {
    service = await startTestService({ store, harness, env: { APTIX_OPENAI_MAX_RETRIES: "2" } });
    strict = await startTestService({
      store,
      harness,
      env: { APTIX_OPENAI_MAX_RETRIES: "0", APTIX_OPENAI_TIMEOUT_MS: String(STRICT_TIMEOUT_MS) },
    });
  });

  afterAll(async () => {
    await Promise.all([service?.close(), strict?.close()]);
  });

  describe("conversations", () => conversationScenarios(ctx));
  describe("requests and access", () => requestAndAccessScenarios(ctx));
  describe("one turn per session at a time", () => oneTurnAtATimeScenarios(ctx));
  describe("provider failures", () => providerFailureScenarios(ctx));
});

describe("two server instances on one Postgres (same DATABASE_URL and schema)", () => {
  const instances = useTwoInstances(() => harness);

  it("serializes one session's turns: B is busy while A runs turn 1, then B's retry of turn 2 continues it", async () => {
    const { first: a, second: b } = instances;
    expect(b.database.schema).toBe(a.database.schema);
    await expectSerialized(harness, a, b);
  });
});
