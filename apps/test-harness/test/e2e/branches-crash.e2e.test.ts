import type { SessionSummaryJson } from "@aptix/client";
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import {
  databaseFor,
  e2eServerEnv,
  expectFinal,
  type ServerProcess,
  serviceClient,
  spawnServer,
  type TestDatabase,
  uniqueId,
  userTurn,
} from "../../src/e2e/index.js";

// Child processes compile the server with tsx: on CI's two cores that has taken over 30 s.
const startTimeoutMs = 90_000;
vi.setConfig({ testTimeout: 60_000, hookTimeout: startTimeoutMs + 60_000 });

/**
 * A kill -9 of the instance making forks and a rewind (Postgres): each is one transaction, so another instance
 * finds every fork whole or absent, and the rewound session either as it was or wholly rewound.
 */
let harness: ScriptedOpenAI;
let database: TestDatabase;
let doomed: ServerProcess;
let survivor: ServerProcess;

beforeAll(async () => {
  harness = await startScriptedOpenAI();
  database = await databaseFor("postgres");
  const env = { ...(await e2eServerEnv(database)), OPENAI_API_KEY: "test", OPENAI_BASE_URL: harness.baseUrl };
  [doomed, survivor] = await Promise.all([
    spawnServer({ env, startTimeoutMs }),
    spawnServer({ env, startTimeoutMs }),
  ]);
});

afterAll(async () => {
  await doomed?.kill();
  await survivor?.stop("SIGTERM");
  await database?.dispose();
  await harness?.close();
});

it("leaves every fork and the rewind whole or not made when the instance making them is killed", async () => {
  const client = serviceClient(survivor.url);
  const sessionId = uniqueId("crash-source");
  harness.script(step.text("One."), step.text("Two."), step.text("Three."));
  for (const turnId of ["t1", "t2", "t3"])
    expectFinal(await client.post(userTurn(sessionId, turnId, turnId)));

  const doomedClient = serviceClient(doomed.url);
  const forkIds = Array.from({ length: 40 }, (_, index) => `${sessionId}-fork-${index}`);
  for (const newSessionId of forkIds) {
    void doomedClient
      .send("POST", `/v1/sessions/${sessionId}/fork`, { newSessionId, atTurnId: "t3" })
      .catch(() => undefined);
  }
  void doomedClient
    .send("POST", `/v1/sessions/${sessionId}/rewind`, { beforeTurnId: "t2" })
    .catch(() => undefined);
  // Killed once the first forks are made, while the others are on their way.
  await expect
    .poll(async () => (await client.session(forkIds[0] as string)).status, { timeout: 10_000, interval: 5 })
    .toBe(200);
  await doomed.kill();

  for (const forkId of forkIds) {
    const fork = await client.session(forkId);
    if (fork.status === 404) continue;
    const view = fork.body as { result: SessionSummaryJson };
    expect(
      view.result.turns.map((turn) => turn.turnId),
      forkId,
    ).toEqual(["t1", "t2"]);
    expect(view.result.forkedFrom).toEqual({ sessionId, turnId: "t3" });
  }
  const source = await client.session(sessionId);
  const statuses = (source.body as { result: SessionSummaryJson }).result.turns.map((turn) => turn.status);
  expect([
    ["completed", "completed", "completed"],
    ["completed", "superseded", "superseded"],
  ]).toContainEqual(statuses);
});
