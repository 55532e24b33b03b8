import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkAndResetHarness,
  databaseFor,
  expectFailure,
  expectFinal,
  startTestService,
  type TestDatabase,
  type TestService,
  uniqueId,
  userTurn,
  waitFor,
} from "../../src/e2e/index.js";

/** Lowered from the default 16 so a handful of turns reach it. */
const MAX_RUNNING_TURNS = 2;

describe("APTIX_MAX_RUNNING_TURNS across two server instances on one Postgres", () => {
  let harness: ScriptedOpenAI;
  let database: TestDatabase;
  let first: TestService;
  let second: TestService;
  let release: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  /** The scripted model holds every call until the test releases them: the turns stay running till then. */
  const held = async () => {
    await released;
    return step.text("Done.");
  };

  beforeAll(async () => {
    harness = await startScriptedOpenAI();
    database = await databaseFor("postgres");
    const env = { APTIX_MAX_RUNNING_TURNS: String(MAX_RUNNING_TURNS) };
    first = await startTestService({ store: "postgres", harness, database, env });
    second = await startTestService({ store: "postgres", harness, database, env });
  });

  afterAll(async () => {
    release();
    await first?.close();
    await second?.close();
    await database?.dispose();
    await harness?.close();
  });

  it("refuses a principal's turn past the cap with 429 RATE_LIMITED and Retry-After, on either instance, and not another principal's", async () => {
    harness.script(held, held, held, held);
    // Alice's two turns run at once, one on each instance: the cap is judged across instances.
    const running = [
      first.post(userTurn(uniqueId("cap-a"), "t1", "One.")),
      second.post(userTurn(uniqueId("cap-b"), "t1", "Two.")),
    ];
    await waitFor(() => harness.responseRequests().length === 2, "alice's two turns at the model");

    const third = uniqueId("cap-c");
    for (const instance of [first, second]) {
      const refused = await instance.post(userTurn(third, "t1", "Three."));
      const error = expectFailure(refused, 429, "RATE_LIMITED");
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(error.details).toEqual({ limit: "APTIX_MAX_RUNNING_TURNS", retryAfterSeconds: 1 });
      expect(error.message).toContain("APTIX_MAX_RUNNING_TURNS");
    }
    // Nothing of the refused turn was stored: not even its session.
    expectFailure(await first.session(third), 404, "SESSION_NOT_FOUND");

    // Bob is not alice: his turn runs beside hers.
    const bobs = first.post(userTurn(uniqueId("cap-bob"), "t1", "Bob's."), "bob");
    await waitFor(() => harness.responseRequests().length === 3, "bob's turn at the model");

    release();
    for (const answer of [...(await Promise.all(running)), await bobs]) {
      expect(expectFinal(answer).primaryOutputText).toBe("Done.");
    }
    // Her turns over, alice runs the refused one.
    expect(expectFinal(await second.post(userTurn(third, "t1", "Three."))).primaryOutputText).toBe("Done.");
    checkAndResetHarness(harness);
  });
});
