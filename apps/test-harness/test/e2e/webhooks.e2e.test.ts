/**
 * Webhooks over HTTP on both stores, to real loopback receivers: a turn that completes, fails, is cancelled or
 * waits for client tools posts its event, signed as Standard Webhooks are (checked with the docs' `node:crypto`
 * verification and with the `standardwebhooks` package), to the webhooks whose events and principals it matches;
 * so do a turn cancelled while queued, a compaction asked for and a turn refused for a spent budget; a delivery
 * answered 500 comes again after 5 s with the same id and body; the metric counts each outcome.
 */
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  checkAndResetHarness,
  documentedWebhookVerification,
  E2E_CATALOG,
  E2E_STORES,
  expectContinuation,
  expectFailure,
  expectFinal,
  expectOk,
  gatedAnswer,
  type ReceivedWebhook,
  startTestService,
  startWebhookReceiver,
  type TestService,
  type TestStoreKind,
  uniqueId,
  userTurn,
  type WebhookReceiver,
  type WebhookVerification,
  waitFor,
  writeCatalog,
} from "../../src/e2e/index.js";

// The retried delivery waits out the first delay of the schedule (5 s).
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

interface EventBody {
  type: string;
  timestamp: string;
  data: { principal: string; sessionId: string; turnId?: string; status?: string; result?: unknown };
}

const bodyOf = (delivery: ReceivedWebhook) => JSON.parse(delivery.body) as EventBody;

/** The deliveries `receiver` got for `sessionId`. */
const deliveriesOf = (receiver: WebhookReceiver, sessionId: string) =>
  receiver.received.filter((delivery) => bodyOf(delivery).data.sessionId === sessionId);

/** Waits for `count` deliveries of `sessionId` to `receiver`, and answers them. */
async function awaitDeliveries(receiver: WebhookReceiver, sessionId: string, count = 1) {
  await waitFor(
    () => deliveriesOf(receiver, sessionId).length >= count,
    `${count} webhook(s) of ${sessionId}`,
  );
  return deliveriesOf(receiver, sessionId);
}

let verifyAsDocumented: WebhookVerification;

/** Bob's budget: far above what his turns report, until one reports spending it all. */
const BOB_TOKENS_DAILY = 1_000_000;

/**
 * Checks a delivery's signature two ways: with the snippet of docs/operations.md, and with the `standardwebhooks`
 * package, an implementation other than ours.
 */
function expectSigned(receiver: WebhookReceiver, delivery: ReceivedWebhook): void {
  expect(verifyAsDocumented(receiver.secret, delivery.headers, delivery.body)).toBe(true);
  expect(verifyAsDocumented(receiver.secret, delivery.headers, `${delivery.body} `)).toBe(false);
  const verified = new Webhook(receiver.secret).verify(delivery.body, {
    "webhook-id": delivery.id,
    "webhook-timestamp": delivery.timestamp,
    "webhook-signature": delivery.signature,
  });
  expect(verified).toEqual(JSON.parse(delivery.body));
}

describe.each(E2E_STORES)("%s store", (store: TestStoreKind) => {
  let harness: ScriptedOpenAI;
  let service: TestService;
  /** Hears every event of every principal. */
  let everything: WebhookReceiver;
  /** Hears bob's completed turns only. */
  let bobsCompleted: WebhookReceiver;

  beforeAll(async () => {
    verifyAsDocumented = await documentedWebhookVerification();
    harness = await startScriptedOpenAI();
    [everything, bobsCompleted] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
    const config = await writeCatalog({
      ...E2E_CATALOG,
      budgets: { bob: { tokensDaily: BOB_TOKENS_DAILY } },
      webhooks: [
        { url: everything.url, secretEnv: "HOOK_SECRET_ALL" },
        {
          url: bobsCompleted.url,
          secretEnv: "HOOK_SECRET_BOB",
          events: ["turn.completed"],
          principals: ["bob"],
        },
      ],
    });
    service = await startTestService({
      store,
      harness,
      env: {
        APTIX_CONFIG: config,
        APTIX_WEBHOOK_ALLOW_PRIVATE: "1",
        HOOK_SECRET_ALL: everything.secret,
        HOOK_SECRET_BOB: bobsCompleted.secret,
      },
    });
  });

  afterAll(async () => {
    await service?.close();
    await harness?.close();
    await everything?.close();
    await bobsCompleted?.close();
  });

  it("posts a completed turn's final answer, signed, to the webhooks that hear it", async () => {
    const alices = uniqueId("hook-alice");
    const bobs = uniqueId("hook-bob");
    harness.script(step.text("Alice's answer."), step.text("Bob's answer."));
    const alice = await service.post(userTurn(alices, "t1", "Hello."));
    expectFinal(alice);
    const bob = await service.post(userTurn(bobs, "t1", "Hello."), "bob");
    expectFinal(bob);

    const [delivery] = await awaitDeliveries(everything, alices);
    expectSigned(everything, delivery as ReceivedWebhook);
    const body = bodyOf(delivery as ReceivedWebhook);
    expect(body).toEqual({
      type: "turn.completed",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { principal: "alice", sessionId: alices, turnId: "t1", status: "completed", result: alice.body },
    });
    expect(delivery?.id).toMatch(/^msg_/);

    // Bob's webhook hears bob's completed turn, never alice's; the other hears both.
    const [bobsDelivery] = await awaitDeliveries(bobsCompleted, bobs);
    expectSigned(bobsCompleted, bobsDelivery as ReceivedWebhook);
    expect(bodyOf(bobsDelivery as ReceivedWebhook).data).toMatchObject({
      principal: "bob",
      result: bob.body,
    });
    await awaitDeliveries(everything, bobs);
    expect(deliveriesOf(bobsCompleted, alices)).toEqual([]);
    // Each webhook's delivery has its own id.
    expect(deliveriesOf(everything, bobs)[0]?.id).not.toBe(bobsDelivery?.id);
    checkAndResetHarness(harness);
  });

  it("posts failed, awaiting and cancelled turns to the webhook of every event, and none to bob's", async () => {
    const failing = uniqueId("hook-failed");
    const awaiting = uniqueId("hook-awaiting");
    harness.script(
      step.error(400, { code: "invalid_request", message: "Not today." }),
      step.functionCalls([{ name: "read_file", callId: "call_1", arguments: { path: "a.txt" } }]),
    );
    const failed = await service.post(userTurn(failing, "t1", "Fail."), "bob");
    expect(failed.body.successful).toBe(false);
    const paused = await service.post(userTurn(awaiting, "t1", "Read a.txt."), "bob");
    expectContinuation(paused);
    const cancelled = await service.send(
      "POST",
      `/v1/sessions/${awaiting}/turns/t1/cancel`,
      undefined,
      "bob",
    );
    expect(cancelled.status).toBe(200);

    const [failedDelivery] = await awaitDeliveries(everything, failing);
    expectSigned(everything, failedDelivery as ReceivedWebhook);
    expect(bodyOf(failedDelivery as ReceivedWebhook)).toMatchObject({
      type: "turn.failed",
      data: { principal: "bob", sessionId: failing, turnId: "t1", status: "failed", result: failed.body },
    });
    const ofAwaiting = await awaitDeliveries(everything, awaiting, 2);
    for (const delivery of ofAwaiting) expectSigned(everything, delivery);
    expect(
      ofAwaiting.map((delivery) => [bodyOf(delivery).type, bodyOf(delivery).data.status]).sort(),
    ).toEqual([
      ["turn.awaiting_client_tools", "awaiting_client_tools"],
      ["turn.cancelled", "cancelled"],
    ]);
    const awaited = ofAwaiting.find((delivery) => bodyOf(delivery).type === "turn.awaiting_client_tools");
    expect(bodyOf(awaited as ReceivedWebhook).data.result).toEqual(paused.body);
    const cancelledBody = ofAwaiting.find((delivery) => bodyOf(delivery).type === "turn.cancelled");
    expect(bodyOf(cancelledBody as ReceivedWebhook).data.result).toMatchObject({
      successful: false,
      errors: [{ code: "TURN_CANCELLED" }],
    });
    // Bob's webhook hears completed turns only.
    expect([...deliveriesOf(bobsCompleted, failing), ...deliveriesOf(bobsCompleted, awaiting)]).toEqual([]);
    checkAndResetHarness(harness);
  });

  it("delivers again 5 s after a 500, with the same id and body, and counts each outcome", async () => {
    const sessionId = uniqueId("hook-retried");
    let refused = false;
    everything.answer = (request) => {
      if (refused || !request.body.includes(sessionId)) return 200;
      refused = true;
      return 500;
    };
    harness.script(step.text("Answered."));
    expectFinal(await service.post(userTurn(sessionId, "t1", "Hello.")));

    const [first, second] = await awaitDeliveries(everything, sessionId, 2);
    expect(first?.answered).toBe(500);
    expect(second?.answered).toBe(200);
    expect(second?.id).toBe(first?.id);
    expect(second?.body).toBe(first?.body);
    for (const delivery of [first, second]) expectSigned(everything, delivery as ReceivedWebhook);
    expect(Number(second?.timestamp) - Number(first?.timestamp)).toBeGreaterThanOrEqual(4);

    const metrics = await fetch(`${service.url}/metrics`).then((response) => response.text());
    const counted = (outcome: string) =>
      Number(
        new RegExp(`aptix_webhook_deliveries_total\\{outcome="${outcome}"\\} (\\d+)`).exec(metrics)?.[1],
      );
    expect(counted("retried")).toBeGreaterThanOrEqual(1);
    expect(counted("delivered")).toBeGreaterThanOrEqual(2);
    expect(service.logs.map((line) => JSON.stringify(line)).join("\n")).not.toContain(
      everything.secret.slice("whsec_".length),
    );
    checkAndResetHarness(harness);
  });

  it("posts a turn cancelled while queued, and the session compacted when asked", async () => {
    const sessionId = uniqueId("hook-queued");
    const gate = gatedAnswer("First.");
    harness.script(gate.step, step.text("The user said hello."));
    const turn = (turnId: string, extra: Record<string, unknown>) =>
      service.send("POST", "/v1/agent/execute", userTurn(sessionId, turnId, `Turn ${turnId}.`, extra));
    expect((await turn("t1", { background: true })).status).toBe(202);
    expect((await turn("t2", { background: true, multitask: "enqueue" })).status).toBe(202);
    const cancelled = await service.send("POST", `/v1/sessions/${sessionId}/turns/t2/cancel`);
    expect(expectOk(cancelled)).toMatchObject({ status: "cancelled" });
    gate.open();
    await awaitDeliveries(everything, sessionId, 2);
    // t1 ended: the compaction has something to summarise.
    expect(expectOk(await service.send("POST", `/v1/sessions/${sessionId}/compact`))).toMatchObject({
      compacted: true,
    });

    const ofSession = await awaitDeliveries(everything, sessionId, 3);
    for (const delivery of ofSession) expectSigned(everything, delivery);
    const events = ofSession.map(bodyOf);
    expect(events.map(({ type, data }) => [type, data.turnId]).sort()).toEqual([
      ["session.compacted", expect.any(String)],
      ["turn.cancelled", "t2"],
      ["turn.completed", "t1"],
    ]);
    expect(events.find(({ type }) => type === "turn.cancelled")?.data).toMatchObject({
      principal: "alice",
      status: "cancelled",
      result: { successful: false, errors: [{ code: "TURN_CANCELLED" }] },
    });
    // A compaction has no status and no result.
    const compacted = events.find(({ type }) => type === "session.compacted");
    expect(Object.keys(compacted?.data ?? {}).sort()).toEqual(["principal", "sessionId", "turnId"]);
    expect(compacted?.data).toMatchObject({ principal: "alice", sessionId });
    // The cancelled turn never asked the provider: its turn and the summary did.
    expect(harness.responseRequests()).toHaveLength(2);
    checkAndResetHarness(harness);
  });

  // Bob's budget is spent from here on: the tests after this one are alice's.
  it("posts a turn refused for a spent budget as budget.exceeded, to the webhook that hears it", async () => {
    const sessionId = uniqueId("hook-budget");
    harness.script(
      step.text("All of it.", {
        usage: {
          input_tokens: BOB_TOKENS_DAILY,
          output_tokens: 1,
          input_tokens_details: { cached_tokens: 0 },
        },
      }),
    );
    expectFinal(await service.post(userTurn(sessionId, "t1", "Spend it."), "bob"));
    const refused = await service.post(userTurn(sessionId, "t2", "More."), "bob");
    expectFailure(refused, 429, "BUDGET_EXCEEDED");

    const ofSession = await awaitDeliveries(everything, sessionId, 2);
    const exceeded = ofSession.find((delivery) => bodyOf(delivery).type === "budget.exceeded");
    expectSigned(everything, exceeded as ReceivedWebhook);
    expect(bodyOf(exceeded as ReceivedWebhook).data).toEqual({
      principal: "bob",
      sessionId,
      turnId: "t2",
      result: refused.body,
    });
    // Bob's webhook hears completed turns only.
    await awaitDeliveries(bobsCompleted, sessionId);
    expect(deliveriesOf(bobsCompleted, sessionId).map((delivery) => bodyOf(delivery).type)).toEqual([
      "turn.completed",
    ]);
    checkAndResetHarness(harness);
  });

  it("refuses to start with a private URL unless allowed, or with its secret's variable unset, naming them", async () => {
    const config = await writeCatalog({
      ...E2E_CATALOG,
      webhooks: [{ url: "http://127.0.0.1:9/private", secretEnv: "HOOK_SECRET_UNSET" }],
    });
    const start = startTestService({ store, harness, env: { APTIX_CONFIG: config } });
    await expect(start).rejects.toThrow(/webhooks\[0\]\.url: .*APTIX_WEBHOOK_ALLOW_PRIVATE=1/);
    await expect(start).rejects.toThrow(/HOOK_SECRET_UNSET: is unset \(webhooks\[0\]\.secretEnv names it\)/);
  });
});
