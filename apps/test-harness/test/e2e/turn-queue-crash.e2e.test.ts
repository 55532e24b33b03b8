/**
 * Queued turns survive the instance that held the turn before them (docs/operations.md): two server processes on
 * one Postgres database; the one running a session's turn is killed (SIGKILL) while turns wait queued behind it,
 * one queued through each instance. The other instance fails the running turn once its lease expires, then runs
 * the queued ones, in order, each once.
 */

import type { AgentExecuteResponse, TurnStateView } from "@aptix/contracts";
import {
  type RecordedRequest,
  type ScriptedOpenAI,
  startScriptedOpenAI,
  step,
} from "@aptix/testing-llm-servers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  checkAndResetHarness,
  databaseFor,
  e2eServerEnv,
  expectFinal,
  expectOk,
  type HttpAnswer,
  type ServerProcess,
  type ServiceClient,
  serviceClient,
  spawnServer,
  type TestDatabase,
  uniqueId,
  userTurn,
  waitFor,
} from "../../src/e2e/index.js";

// Child processes compile the server with tsx: on CI's two cores that has taken over 30 s.
const startTimeoutMs = 90_000;
vi.setConfig({ testTimeout: 60_000, hookTimeout: startTimeoutMs + 60_000 });

/** Short, so the test waits for expiry in seconds; the housekeeping runs every quarter lease. */
const LEASE_MS = 2_000;

const FIRST = "Start the long job.";
const QUEUED = ["Then the second.", "Then the third."];

/** The scripted model: the first turn's call is held until its caller goes; the queued ones answer at once. */
const model = (request: RecordedRequest) => {
  const body = JSON.stringify(request.body);
  if (body.includes(FIRST)) return step.text("Never delivered.", { delayMs: 120_000 });
  const instruction = QUEUED.find((queued) => body.includes(queued)) ?? "?";
  return step.text(`Answer to ${instruction}`);
};

const callsFor = (harness: ScriptedOpenAI, instruction: string) =>
  harness.responseRequests().filter((request) => JSON.stringify(request.body).includes(instruction)).length;

describe("queued turns on two server processes, the one running the turn before them killed (SIGKILL)", () => {
  let harness: ScriptedOpenAI;
  let database: TestDatabase;
  let doomed: ServerProcess;
  let survivor: ServerProcess;
  let client: ServiceClient;
  const sessionId = uniqueId("queue-crash");
  let waiting: Promise<HttpAnswer<AgentExecuteResponse>>;

  beforeAll(async () => {
    harness = await startScriptedOpenAI();
    harness.script(model, model, model);
    database = await databaseFor("postgres");
    const env = {
      ...(await e2eServerEnv(database)),
      OPENAI_API_KEY: "test",
      OPENAI_BASE_URL: harness.baseUrl,
      APTIX_LEASE_MS: String(LEASE_MS),
    };
    [doomed, survivor] = await Promise.all([
      spawnServer({ env, startTimeoutMs }),
      spawnServer({ env, startTimeoutMs }),
    ]);
    client = serviceClient(survivor.url);
    const doomedClient = serviceClient(doomed.url);

    void doomedClient.post(userTurn(sessionId, "t1", FIRST)).catch(() => undefined);
    await waitFor(() => callsFor(harness, FIRST) === 1, "the first turn's call");
    // The second is queued through the survivor, its request waiting there; the third through the doomed one, in
    // the background: only the store keeps it.
    waiting = client.post(userTurn(sessionId, "t2", QUEUED[0] as string, { multitask: "enqueue" }));
    let turns = 0;
    while (turns < 2) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      turns = expectOk(await client.session(sessionId)).turns.length;
    }
    const third = userTurn(sessionId, "t3", QUEUED[1] as string, { multitask: "enqueue", background: true });
    expect((await doomedClient.send("POST", "/v1/agent/execute", third)).status).toBe(202);
    await doomed.kill();
  });

  afterAll(async () => {
    await doomed?.kill();
    await survivor?.stop("SIGTERM");
    await database?.dispose();
    if (harness) {
      try {
        checkAndResetHarness(harness);
      } finally {
        await harness.close();
      }
    }
  });

  it("fails the killed instance's turn, then runs the queued turns on the survivor in order, each once", async () => {
    expect(expectFinal(await waiting).primaryOutputText).toBe(`Answer to ${QUEUED[0]}`);
    let third: TurnStateView = { turnId: "t3", status: "queued" };
    const deadline = Date.now() + 30_000;
    while (third.status !== "completed" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      third = expectOk(await client.get<TurnStateView>(`/v1/sessions/${sessionId}/turns/t3`));
    }
    expect(third.result).toMatchObject({ primaryOutputText: `Answer to ${QUEUED[1]}` });
    const summary = expectOk(await client.session(sessionId));
    expect(summary.turns.map((turn) => [turn.turnId, turn.status, turn.error?.code ?? null])).toEqual([
      ["t1", "failed", "TURN_INTERRUPTED"],
      ["t2", "completed", null],
      ["t3", "completed", null],
    ]);
    for (const instruction of QUEUED) expect(callsFor(harness, instruction), instruction).toBe(1);
    const order = harness
      .responseRequests()
      .map((request) => QUEUED.findIndex((queued) => JSON.stringify(request.body).includes(queued)))
      .filter((index) => index >= 0);
    expect(order).toEqual([0, 1]);
  });
});
