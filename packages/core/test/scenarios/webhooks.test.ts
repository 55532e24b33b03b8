import { describe, expect, it } from "vitest";
import type { ClaimedDelivery, SessionStores } from "../../src/index.js";
import {
  catalogWithContextSettings,
  createTestAgent,
  errorsOf,
  PRINCIPAL,
  responseOf,
  resultOf,
} from "../support/test-agent.js";

const EVERYTHING = { target: "https://hooks.example/all" };
const BOBS_COMPLETED = {
  target: "https://hooks.example/bob",
  events: ["turn.completed"] as const,
  principals: ["bob"],
};

/**
 * Every delivery waiting in the outbox, with its body parsed, in the order of their events' type, principal and
 * target (deliveries written at one time come in no set order).
 */
async function outbox(store: SessionStores) {
  const claimed: ClaimedDelivery[] = await store.webhooks.claimDue({
    claimant: "test",
    limit: 100,
    claimMs: 1,
  });
  const parsed = claimed.map((delivery) => ({ ...delivery, event: JSON.parse(delivery.body) }));
  const order = ({ target, event }: (typeof parsed)[number]) =>
    `${event.type}/${event.data.principal}/${target}`;
  return parsed.sort((a, b) => order(a).localeCompare(order(b)));
}

describe("webhook events are kept with the writes that make them", () => {
  it("keeps a completed turn's event for each webhook that hears it, with the answer it gave", async () => {
    const agent = await createTestAgent({ webhooks: [EVERYTHING, BOBS_COMPLETED] });
    agent.provider.enqueue({ text: "Alice's." }, { text: "Bob's." });
    const alices = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi." });
    responseOf(alices);
    const bobs = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hi." }, "bob");

    const kept = await outbox(agent.store);
    expect(kept.map(({ target, event }) => [target, event.type, event.data.principal])).toEqual([
      [EVERYTHING.target, "turn.completed", PRINCIPAL],
      [EVERYTHING.target, "turn.completed", "bob"],
      [BOBS_COMPLETED.target, "turn.completed", "bob"],
    ]);
    expect(kept[0]?.event).toEqual({
      type: "turn.completed",
      timestamp: agent.clock.now().toISOString(),
      data: { principal: PRINCIPAL, sessionId: "s", turnId: "t1", status: "completed", result: alices },
    });
    // One event, two webhooks: the same body, each delivery its own id.
    expect(kept[2]?.body).toBe(kept[1]?.body);
    expect(kept[1]?.event.data.result).toEqual(bobs);
    expect(new Set(kept.map(({ deliveryId }) => deliveryId)).size).toBe(3);
  });

  it("keeps a refusal by the budget and a compaction", async () => {
    const agent = await createTestAgent({
      config: catalogWithContextSettings({ contextWindowTokens: 1_000, compactionModel: "summariser" }),
      webhooks: [EVERYTHING],
      budgets: { defaults: {}, principals: { bob: { tokensDaily: 15 } } },
    });
    agent.provider.enqueue({ text: "One." }, { text: "Summary by hand." }, { text: "Bob's." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "One" }));
    expect(resultOf(await agent.service.compactSession(PRINCIPAL, "s"))).toMatchObject({ compacted: true });
    responseOf(await agent.execute({ sessionId: "b", turnId: "t1", instruction: "One" }, "bob"));
    const refused = await agent.execute({ sessionId: "b", turnId: "t2", instruction: "Two" }, "bob");
    expect(errorsOf(refused)[0]?.code).toBe("BUDGET_EXCEEDED");

    const kept = await outbox(agent.store);
    expect(kept.map(({ event }) => [event.type, event.data.principal, event.data.turnId])).toEqual([
      ["budget.exceeded", "bob", "t2"],
      ["session.compacted", PRINCIPAL, "t1"],
      ["turn.completed", PRINCIPAL, "t1"],
      ["turn.completed", "bob", "t1"],
    ]);
    expect(kept[0]?.event.data).toEqual({ principal: "bob", sessionId: "b", turnId: "t2", result: refused });
  });

  it("keeps a running turn the budget ended as turn.failed and budget.exceeded, both with its answer", async () => {
    const agent = await createTestAgent({
      webhooks: [EVERYTHING],
      budgets: { defaults: { tokensDaily: 20 }, principals: {} },
    });
    // Its first call spends the budget and asks for a server tool: the turn ends before its next call.
    agent.provider.enqueue({
      text: "Looking it up.",
      toolCalls: [{ name: "lookup", arguments: { query: "cart" } }],
      usage: { inputTokens: 10, outputTokens: 15 },
    });
    const failed = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Look it up." });
    expect(errorsOf(failed)[0]?.code).toBe("BUDGET_EXCEEDED");

    const kept = await outbox(agent.store);
    expect(kept.map(({ event }) => [event.type, event.data.turnId, event.data.status])).toEqual([
      ["budget.exceeded", "t1", "failed"],
      ["turn.failed", "t1", "failed"],
    ]);
    expect(kept[0]?.event.data.result).toEqual(failed);
    expect(kept[1]?.event.data.result).toEqual(failed);
  });

  it("keeps nothing without webhooks", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "One." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "One" }));
    expect(await outbox(agent.store)).toEqual([]);
  });
});
