import type { AgentExecuteResponse } from "@aptix/contracts";
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
  expectFailure,
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

/** Short, so the test waits for expiry in seconds; the housekeeping runs every quarter lease (500 ms). */
const LEASE_MS = 2_000;
const HOUSEKEEPING_MS = LEASE_MS / 4;
/** How often the clients below send their request again. */
const RETRY_MS = 100;

/** What one client saw: every answer, in order, until one was not SESSION_BUSY. */
interface Retries {
  answers: Array<HttpAnswer<AgentExecuteResponse>>;
  last: HttpAnswer<AgentExecuteResponse>;
}

/** Sends `body` to `client` until the answer is not 409 SESSION_BUSY, as a client told to retry would. */
async function retryWhileBusy(client: ServiceClient, body: unknown): Promise<Retries> {
  const answers: Array<HttpAnswer<AgentExecuteResponse>> = [];
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await client.post(body);
    answers.push(answer);
    const busy =
      answer.status === 409 && !answer.body.successful && answer.body.errors[0].code === "SESSION_BUSY";
    if (!busy || Date.now() > deadline) return { answers, last: answer };
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

function statusesOf(retries: Retries): string[] {
  return retries.answers.map((answer) =>
    answer.body.successful ? `${answer.status}` : `${answer.status} ${answer.body.errors[0].code}`,
  );
}

describe("two server processes on one Postgres, one killed (SIGKILL) in the middle of three turns", () => {
  let harness: ScriptedOpenAI;
  let database: TestDatabase;
  let doomed: ServerProcess;
  let survivor: ServerProcess;
  let client: ServiceClient;
  let killedAt: number;
  let killed = false;
  const retried = { sessionId: uniqueId("crash-retried"), instruction: "Finish this, please." };
  const replaced = { sessionId: uniqueId("crash-replaced"), instruction: "Start this." };
  const abandoned = { sessionId: uniqueId("crash-abandoned"), instruction: "Nobody asks again." };
  let retriedClient: Promise<Retries>;
  let newTurnClient: Promise<Retries>;

  /** The scripted model: slow (held until its caller goes) before the kill; then it answers by instruction. */
  const model = (request: RecordedRequest) => {
    if (!killed) return step.text("Never delivered.", { delayMs: 120_000 });
    const body = JSON.stringify(request.body);
    if (body.includes(retried.instruction)) return step.text("The answer after the crash.");
    return step.text("The new turn's answer.");
  };

  beforeAll(async () => {
    harness = await startScriptedOpenAI();
    harness.script(model, model, model, model, model);
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

    // Three turns reach the model through the doomed instance, which holds their sessions' leases.
    const doomedClient = serviceClient(doomed.url);
    for (const turn of [retried, replaced, abandoned]) {
      void doomedClient.post(userTurn(turn.sessionId, "t1", turn.instruction)).catch(() => undefined);
    }
    await waitFor(() => harness.responseRequests().length >= 3, "three turns mid-flight");
    killed = true;
    killedAt = Date.now();
    await doomed.kill();

    // The clients go on with the other instance at once: one sends its turn again, one starts a new turn.
    retriedClient = retryWhileBusy(client, userTurn(retried.sessionId, "t1", retried.instruction));
    newTurnClient = retryWhileBusy(client, userTurn(replaced.sessionId, "t2", "Something else."));
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

  it("runs a turn sent again on the surviving instance once its lease expired: busy until then, never a 5xx", async () => {
    const retries = await retriedClient;
    const statuses = statusesOf(retries);
    // Busy while the killed instance's lease holds, then the answer: nothing else along the way.
    expect(statuses.at(-1)).toBe("200");
    expect(statuses.slice(0, -1).length).toBeGreaterThan(0);
    expect(new Set(statuses.slice(0, -1))).toEqual(new Set(["409 SESSION_BUSY"]));
    expect(expectFinal(retries.last).primaryOutputText).toBe("The answer after the crash.");

    // The model saw the turn twice (the lost attempt and the new one); the finished round made one call.
    // Counted by instruction: the other sessions' turns run concurrently with this one.
    const sentForRetried = () =>
      harness
        .responseRequests()
        .filter((request) => JSON.stringify(request.body).includes(retried.instruction));
    expect(sentForRetried()).toHaveLength(2);
    const trace = expectOk(await client.trace(retried.sessionId, "t1"));
    expect(trace).toMatchObject({ status: "completed", error: null });
    expect(trace.llmCalls).toHaveLength(1);
    expect(trace.rounds.map((round) => round.result)).toEqual([retries.last.body]);

    // Sent once more, it answers as stored without calling the model.
    const again = await client.post(userTurn(retried.sessionId, "t1", retried.instruction));
    expect(again.body).toEqual(retries.last.body);
    expect(sentForRetried()).toHaveLength(2);
  });

  it("fails the interrupted turn with TURN_INTERRUPTED (503, retryable) when the client starts a new turn", async () => {
    const retries = await newTurnClient;
    expect(new Set(statusesOf(retries).slice(0, -1))).toEqual(new Set(["409 SESSION_BUSY"]));
    expect(expectFinal(retries.last).primaryOutputText).toBe("The new turn's answer.");

    const summary = expectOk(await client.session(replaced.sessionId));
    expect(summary.turns.map((turn) => [turn.turnId, turn.status, turn.error?.code ?? null])).toEqual([
      ["t1", "failed", "TURN_INTERRUPTED"],
      ["t2", "completed", null],
    ]);
    const interrupted = await client.post(userTurn(replaced.sessionId, "t1", replaced.instruction));
    expect(expectFailure(interrupted, 503, "TURN_INTERRUPTED").details).toMatchObject({
      turnId: "t1",
      retryable: true,
    });
  });

  it("leaves no turn running past its lease plus the reaper's interval, even one nobody asks about again", async () => {
    // The lease was taken before the kill: it expires within LEASE_MS of it, and the reaper, running every
    // interval, fails the turn at its first run after that (1.5 s of slack for a loaded machine).
    const bound = killedAt + LEASE_MS + HOUSEKEEPING_MS + 1_500;
    let summary = expectOk(await client.session(abandoned.sessionId));
    while (summary.turns[0]?.status === "running" && Date.now() < bound + 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      summary = expectOk(await client.session(abandoned.sessionId));
    }
    const [turn] = summary.turns;
    expect(turn).toMatchObject({ turnId: "t1", status: "failed", error: { code: "TURN_INTERRUPTED" } });
    expect(Date.parse(turn?.completedAt ?? "")).toBeLessThanOrEqual(bound);
    // The log writes a line at the end of the event-loop turn it was logged in, after the commit the client saw.
    await waitFor(
      () => survivor.logs.some((line) => line.message === "failed turns whose instance stopped"),
      "the survivor to log the turns it failed",
    );

    for (const { sessionId } of [retried, replaced, abandoned]) {
      const turns = expectOk(await client.session(sessionId)).turns;
      expect(turns.filter((each) => each.status === "running")).toEqual([]);
    }
  });
});
