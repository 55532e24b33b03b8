/**
 * Turns without a waiting client, over real HTTP on both stores (docs/http-api.md, "Background turns" and "Double
 * texting"): a background turn answered 202 and read back by its id; a user turn sent while its session's turn
 * runs, refused (the default), queued in order (on Postgres through two instances) or interrupting the running one.
 */

import type { AgentExecuteResponse, TurnAccepted, TurnStateView } from "@aptix/contracts";
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  API_KEYS,
  checkAndResetHarness,
  E2E_STORES,
  expectContinuation,
  expectFailure,
  expectFinal,
  expectOk,
  gatedAnswer,
  type HttpAnswer,
  type ServiceClient,
  startTestService,
  type TestService,
  type TestStoreKind,
  toolContinuation,
  uniqueId,
  userTurn,
  waitFor,
} from "../../src/e2e/index.js";
import { useTwoInstances } from "../support/two-instances.js";

/** A provider answer held far longer than any test runs: it ends only when its caller goes away. */
const HELD = step.text("Never delivered.", { delayMs: 120_000 });

let harness: ScriptedOpenAI;

beforeAll(async () => {
  harness = await startScriptedOpenAI();
});

afterAll(async () => {
  await harness?.close();
});

afterEach(() => {
  checkAndResetHarness(harness);
});

/** How many provider calls so far asked the instruction `instruction`. */
const callsFor = (instruction: string) =>
  harness.responseRequests().filter((request) => JSON.stringify(request.body).includes(instruction)).length;

/** The instructions of the provider calls so far, among `instructions`, in the order they were asked. */
const askedInOrder = (instructions: readonly string[]) =>
  harness
    .responseRequests()
    .map((request) => instructions.find((instruction) => JSON.stringify(request.body).includes(instruction)))
    .filter((instruction) => instruction !== undefined);

const turnPath = (sessionId: string, turnId: string) => `/v1/sessions/${sessionId}/turns/${turnId}`;

const getTurn = (client: ServiceClient, sessionId: string, turnId: string, as: "alice" | "bob" = "alice") =>
  client.get<TurnStateView>(turnPath(sessionId, turnId), as);

/** Reads the turn until its status is `status`, and answers it then. */
async function pollUntil(client: ServiceClient, sessionId: string, turnId: string, status: string) {
  let seen: TurnStateView | undefined;
  const reads = async () => {
    seen = expectOk(await getTurn(client, sessionId, turnId));
    return seen.status === status;
  };
  const deadline = Date.now() + 20_000;
  while (!(await reads())) {
    if (Date.now() > deadline) throw new Error(`turn ${turnId} stayed ${seen?.status}, never ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return seen as TurnStateView;
}

/** The session's turns as `[turnId, status]`. */
async function statuses(client: ServiceClient, sessionId: string) {
  return expectOk(await client.session(sessionId)).turns.map((turn) => [turn.turnId, turn.status]);
}

/** Waits until the session holds `count` turns (a turn sent was stored, running or queued). */
async function stored(client: ServiceClient, sessionId: string, count: number) {
  let turns = 0;
  const deadline = Date.now() + 20_000;
  while (turns < count) {
    if (Date.now() > deadline) throw new Error(`the session holds ${turns} turns, never ${count}`);
    turns = expectOk(await client.session(sessionId)).turns.length;
    if (turns < count) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts turn t1 of a new session, its provider call held by `held`, and waits until the call is made. */
async function runningTurn(
  client: ServiceClient,
  held: Parameters<ScriptedOpenAI["enqueue"]>[0],
): Promise<{ sessionId: string; first: Promise<HttpAnswer<AgentExecuteResponse>> }> {
  const sessionId = uniqueId("queue");
  const before = harness.responseRequests().length;
  harness.enqueue(held);
  const first = client.post(userTurn(sessionId, "t1", "Question one."));
  await waitFor(() => harness.responseRequests().length > before, "the held provider call");
  return { sessionId, first };
}

describe.each(E2E_STORES)("%s store", (store: TestStoreKind) => {
  let service: TestService | undefined;
  const client = (): TestService => {
    if (!service) throw new Error("the service did not start");
    return service;
  };

  beforeAll(async () => {
    service = await startTestService({ store, harness });
  });

  afterAll(async () => {
    await service?.close();
  });

  it("answers a background turn 202 at once; polled, it reads as a waiting client would have got it", async () => {
    const sessionId = uniqueId("background");
    const gate = gatedAnswer("Done in the background.");
    harness.enqueue(gate.step);
    const body = userTurn(sessionId, "t1", "Work alone.", { background: true });
    const accepted = await client().send<TurnAccepted>("POST", "/v1/agent/execute", body);
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get("location")).toBe(turnPath(sessionId, "t1"));
    expect(accepted.body).toMatchObject({
      successful: true,
      result: { sessionId, turnId: "t1", status: "running" },
    });
    await waitFor(() => callsFor("Work alone.") === 1, "the background turn's provider call");
    expect(expectOk(await getTurn(client(), sessionId, "t1"))).toEqual({ turnId: "t1", status: "running" });
    // Another principal's ids answer as unknown ones.
    expectFailure(await getTurn(client(), sessionId, "t1", "bob"), 404, "SESSION_NOT_FOUND");
    expectFailure(await getTurn(client(), sessionId, "t9"), 404, "TURN_NOT_FOUND");
    gate.open();

    const ended = await pollUntil(client(), sessionId, "t1", "completed");
    expect(ended.result).toMatchObject({ kind: "final", primaryOutputText: "Done in the background." });
    // Sent again: a replay, answered 202 with the status it has now; the model is not asked again.
    const again = await client().send<TurnAccepted>("POST", "/v1/agent/execute", body);
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toMatchObject({ result: { status: "completed" } });
    expect(callsFor("Work alone.")).toBe(1);
    // The events route follows it too, to its result.
    const events = await fetch(`${client().url}${turnPath(sessionId, "t1")}/events`, {
      headers: { authorization: `Bearer ${API_KEYS.alice}` },
    });
    expect(await events.text()).toContain("Done in the background.");
  });

  it("polls a background turn to awaiting_client_tools, with the tool calls a waiting client got", async () => {
    const sessionId = uniqueId("background-tools");
    harness.enqueue(
      step.functionCalls({ name: "read_file", arguments: { path: "src/a.ts" }, callId: "call_1" }),
    );
    const body = userTurn(sessionId, "t1", "Read a file.", { background: true });
    expect((await client().send("POST", "/v1/agent/execute", body)).status).toBe(202);
    const awaiting = await pollUntil(client(), sessionId, "t1", "awaiting_client_tools");
    expect(awaiting.result).toMatchObject({
      kind: "client_tool_continuation",
      toolCalls: [{ toolCallId: "call_1", name: "read_file" }],
    });
  });

  it("refuses a second turn while one runs by default, and bad multitask or background values naming the field", async () => {
    const { sessionId, first } = await runningTurn(client(), HELD);
    expectFailure(await client().post(userTurn(sessionId, "t2", "Two.")), 409, "SESSION_BUSY");
    expectFailure(
      await client().post(userTurn(sessionId, "t2", "Two.", { multitask: "reject" })),
      409,
      "SESSION_BUSY",
    );
    for (const [field, extra] of [
      ["multitask", { multitask: "later" }],
      ["background", { background: "yes" }],
      ["background", { background: true, stream: true }],
    ] as const) {
      const refused = expectFailure(
        await client().send("POST", "/v1/agent/execute", userTurn(sessionId, "t3", "Three.", extra)),
        400,
        "VALIDATION_FAILED",
      );
      expect(JSON.stringify(refused.details), field).toContain(`"${field}"`);
    }
    expectOk(await client().send("POST", `${turnPath(sessionId, "t1")}/cancel`));
    expectFailure(await first, 409, "TURN_CANCELLED");
    expect(await statuses(client(), sessionId)).toEqual([["t1", "cancelled"]]);
  });

  it("interrupts the running turn as a cancel does and runs the new one at once", async () => {
    const { sessionId, first } = await runningTurn(client(), HELD);
    harness.enqueue("The new answer.");
    const second = await client().post(
      userTurn(sessionId, "t2", "Change of plan.", { multitask: "interrupt" }),
    );
    expect(expectFinal(second).primaryOutputText).toBe("The new answer.");
    expectFailure(await first, 409, "TURN_CANCELLED");
    expect(await statuses(client(), sessionId)).toEqual([
      ["t1", "cancelled"],
      ["t2", "completed"],
    ]);
  });

  it("interrupts a turn awaiting client tools by abandoning it: its late tool results are refused, the new turn runs", async () => {
    const sessionId = uniqueId("interrupt-awaiting");
    harness.enqueue(
      step.functionCalls({ name: "read_file", arguments: { path: "src/a.ts" }, callId: "call_1" }),
    );
    const asked = expectContinuation(await client().post(userTurn(sessionId, "t1", "Read it first.")));
    harness.enqueue("Started over.");
    const second = await client().post(userTurn(sessionId, "t2", "Forget it.", { multitask: "interrupt" }));
    expect(expectFinal(second).primaryOutputText).toBe("Started over.");
    const results = [{ toolCallId: asked.toolCalls[0]?.toolCallId ?? "", resultJson: '"export {}"' }];
    const late = await client().post(toolContinuation(sessionId, "t1", results));
    expect(expectFailure(late, 409, "TURN_NOT_AWAITING_TOOLS").details).toMatchObject({
      status: "abandoned",
    });
    expect(await statuses(client(), sessionId)).toEqual([
      ["t1", "abandoned"],
      ["t2", "completed"],
    ]);
    // The new turn was the last call: the late results asked the model nothing.
    expect(harness.responseRequests()).toHaveLength(2);
  });

  it("queues a turn behind one awaiting client tools, and runs it once that turn's results end it", async () => {
    const sessionId = uniqueId("queue-awaiting");
    harness.enqueue(
      step.functionCalls({ name: "read_file", arguments: { path: "src/a.ts" }, callId: "call_1" }),
    );
    const asked = expectContinuation(await client().post(userTurn(sessionId, "t1", "Read it first.")));
    // The continuation is asked first, then the queued turn.
    harness.enqueue("The file is fine.", "Queued answer.");
    const queued = client().post(userTurn(sessionId, "t2", "Then this.", { multitask: "enqueue" }));
    await stored(client(), sessionId, 2);
    expect(await statuses(client(), sessionId)).toEqual([
      ["t1", "awaiting_client_tools"],
      ["t2", "queued"],
    ]);
    const results = [{ toolCallId: asked.toolCalls[0]?.toolCallId ?? "", resultJson: '"export {}"' }];
    expect(
      expectFinal(await client().post(toolContinuation(sessionId, "t1", results))).primaryOutputText,
    ).toBe("The file is fine.");
    expect(expectFinal(await queued).primaryOutputText).toBe("Queued answer.");
    // The queued turn was asked after the continuation, last.
    expect(JSON.stringify(harness.responseRequests().at(-1)?.body)).toContain("Then this.");
    expect(callsFor("Then this.")).toBe(1);
  });

  it("keeps 8 turns queued at most (the 9th is 429), and a queued turn cancelled never runs", async () => {
    const gate = gatedAnswer("One.");
    const { sessionId, first } = await runningTurn(client(), gate.step);
    const waiting: Array<Promise<HttpAnswer<AgentExecuteResponse>>> = [];
    for (let turn = 2; turn <= 9; turn++) {
      if (turn !== 3) harness.enqueue(`Answer ${turn}.`);
      waiting.push(
        client().post(userTurn(sessionId, `t${turn}`, `Queued ${turn}.`, { multitask: "enqueue" })),
      );
      await stored(client(), sessionId, turn);
    }
    const ninth = await client().post(userTurn(sessionId, "t10", "Queued 10.", { multitask: "enqueue" }));
    expect(expectFailure(ninth, 429, "RATE_LIMITED").details).toMatchObject({ limit: "queuedTurns", max: 8 });
    expect(ninth.headers.get("retry-after")).toBe("1");
    expect(expectOk(await client().send("POST", `${turnPath(sessionId, "t3")}/cancel`))).toMatchObject({
      status: "cancelled",
    });
    gate.open();
    expect(expectFinal(await first).primaryOutputText).toBe("One.");
    const answers = await Promise.all(waiting);
    expectFailure(answers[1] as HttpAnswer<AgentExecuteResponse>, 409, "TURN_CANCELLED");
    for (const [index, answer] of answers.entries()) {
      if (index !== 1) expect(expectFinal(answer).primaryOutputText).toBe(`Answer ${index + 2}.`);
    }
    expect(callsFor("Queued 3.")).toBe(0);
    const order = ["Question one.", ...Array.from({ length: 8 }, (_, at) => `Queued ${at + 2}.`)];
    expect(askedInOrder(order)).toEqual(order.filter((instruction) => instruction !== "Queued 3."));
  });
});

describe("queued turns through two instances on one Postgres database", () => {
  const instances = useTwoInstances(() => harness);

  it("runs turns queued through either instance in the order they were sent, each once", async () => {
    const { first: one, second: two } = instances;
    const gate = gatedAnswer("One.");
    const { sessionId, first } = await runningTurn(one, gate.step);
    const queued = ["Two.", "Three.", "Four.", "Five."];
    const waiting: Array<Promise<HttpAnswer<AgentExecuteResponse>>> = [];
    for (const [index, instruction] of queued.entries()) {
      harness.enqueue(`Answer to ${instruction}`);
      const via = index % 2 === 0 ? two : one;
      const background = index === 3;
      const body = userTurn(sessionId, `t${index + 2}`, instruction, { multitask: "enqueue", background });
      waiting.push(background ? via.send("POST", "/v1/agent/execute", body) : via.post(body));
      await stored(one, sessionId, index + 2);
    }
    expect(await statuses(two, sessionId)).toEqual([
      ["t1", "running"],
      ["t2", "queued"],
      ["t3", "queued"],
      ["t4", "queued"],
      ["t5", "queued"],
    ]);
    gate.open();
    expect(expectFinal(await first).primaryOutputText).toBe("One.");
    const answers = await Promise.all(waiting);
    for (const [index, instruction] of queued.slice(0, 3).entries()) {
      expect(expectFinal(answers[index] as HttpAnswer<AgentExecuteResponse>).primaryOutputText).toBe(
        `Answer to ${instruction}`,
      );
    }
    expect(answers[3]?.status).toBe(202);
    const fifth = await pollUntil(two, sessionId, "t5", "completed");
    expect(fifth.result).toMatchObject({ primaryOutputText: "Answer to Five." });
    expect(askedInOrder(["Question one.", ...queued])).toEqual(["Question one.", ...queued]);
  });
});
