import type { SessionStores, TurnPatch, TurnRecord, WebhookDelivery } from "@aptix/core";
import { type ManualClock, newCallRecord, newLease, newTurnRecord } from "@aptix/core/testing";
import { describe, expect, it } from "vitest";
import { CREATE, LEASE_MS, type SessionStoresHarness, sessionSuite } from "./session-stores-harness.js";

const CLAIM_MS = 30_000;

/** A delivery whose body holds characters JSON and SQL text both must keep byte for byte. */
function delivery(id: string, target = "https://hooks.example/a"): WebhookDelivery {
  return { deliveryId: id, target, body: `{"type":"turn.completed","note":"é ${id} \\u0000 'q'"}` };
}

/**
 * The behaviour every `WebhookOutbox` shares with the turns' writes that fill it: deliveries are kept only with
 * a write that applies, in its step; a claim hands each due delivery to one claimant until its claim expires;
 * only the claimant removes or reschedules it, and a rescheduled one is due again after its delay, by the store's
 * clock. Call it at the top level of a test file.
 */
export function describeWebhookOutboxContract(
  name: string,
  makeStore: () => Promise<SessionStoresHarness>,
): void {
  describe(`WebhookOutbox contract: ${name}`, () => {
    let store: SessionStores;
    let clock: ManualClock;
    const { key, claim, start } = sessionSuite(makeStore, (ready) => {
      ({ store, clock } = ready);
    });
    const claimAll = (claimant: string, limit = 10) =>
      store.webhooks.claimDue({ claimant, limit, claimMs: CLAIM_MS });

    it("keeps a claim's deliveries with it, each handed to one claimant with its exact body", async () => {
      await claim("owner-1");
      const read = await store.directory.getSession(key);
      const applied = await store.turns.write({
        key,
        guard: "version",
        expectVersion: read?.version ?? 0,
        lease: newLease("owner-1", LEASE_MS),
        now: clock.now(),
        webhooks: [delivery("msg_1"), delivery("msg_2", "https://hooks.example/b")],
      });
      expect(applied.outcome).toBe("busy");
      await store.turns.releaseLease(key, "owner-1");
      const again = await store.turns.write({
        key,
        guard: "version",
        expectVersion: (await store.directory.getSession(key))?.version ?? 0,
        lease: newLease("owner-1", LEASE_MS),
        now: clock.now(),
        webhooks: [delivery("msg_1"), delivery("msg_2", "https://hooks.example/b")],
      });
      expect(again.outcome).toBe("applied");

      const claimed = await claimAll("claimant-1");
      expect(claimed.map(({ deliveryId }) => deliveryId).sort()).toEqual(["msg_1", "msg_2"]);
      expect(claimed.find(({ deliveryId }) => deliveryId === "msg_2")).toEqual({
        ...delivery("msg_2", "https://hooks.example/b"),
        attempts: 0,
      });
      expect(await claimAll("claimant-2")).toEqual([]);
    });

    it("keeps none of a write that is refused", async () => {
      await claim("owner-1");
      const stale = await store.turns.write({
        key,
        guard: "version",
        expectVersion: 999,
        lease: newLease("owner-2", LEASE_MS),
        now: clock.now(),
        webhooks: [delivery("msg_stale")],
      });
      expect(stale.outcome).not.toBe("applied");
      const created = await store.turns.write({
        key,
        guard: "create",
        create: { ...CREATE },
        lease: newLease("owner-3", LEASE_MS),
        now: clock.now(),
        webhooks: [delivery("msg_exists")],
      });
      expect(created.outcome).not.toBe("applied");
      expect(await claimAll("claimant-1")).toEqual([]);
    });

    it("keeps a running turn's deliveries only while its owner holds the lease", async () => {
      await start("owner-1", "turn-1");
      const settle = (owner: string, id: string) =>
        store.turns.write({
          key,
          guard: "lease",
          owner,
          now: clock.now(),
          turnPatches: [{ turnId: "turn-1", patch: { status: "completed" } }],
          webhooks: [delivery(id)],
        });
      expect((await settle("someone-else", "msg_lost")).outcome).toBe("stale");
      const call = newCallRecord(key, "turn-1", 0);
      const lease = newLease("owner-1", LEASE_MS);
      expect(await store.turns.recordLlmCall({ call, lease, webhooks: [delivery("msg_call")] })).toBe(true);
      expect(
        await store.turns.recordLlmCall({
          call: newCallRecord(key, "turn-1", 1),
          lease: newLease("someone-else", LEASE_MS),
          webhooks: [delivery("msg_call_lost")],
        }),
      ).toBe(false);
      expect((await settle("owner-1", "msg_settled")).outcome).toBe("applied");
      const ids = (await claimAll("claimant-1")).map(({ deliveryId }) => deliveryId);
      expect(ids.sort()).toEqual(["msg_call", "msg_settled"]);
    });

    it("keeps an override's deliveries (a cancel) with it", async () => {
      await start("owner-1", "turn-1");
      const read = await store.directory.getSession(key);
      const cancelled = await store.turns.write({
        key,
        guard: "override",
        expectVersion: read?.version ?? 0,
        now: clock.now(),
        turnPatches: [{ turnId: "turn-1", patch: { status: "cancelled" } }],
        sessionPatch: { openTurnId: null },
        webhooks: [delivery("msg_cancelled")],
      });
      expect(cancelled.outcome).toBe("applied");
      expect((await claimAll("claimant-1")).map(({ deliveryId }) => deliveryId)).toEqual(["msg_cancelled"]);
    });

    it("keeps a queued turn's deliveries (its cancel) with the queue's write, none of a stale one", async () => {
      await start("owner-1", "turn-1");
      const queue = async (
        write: { insertTurn?: TurnRecord; turnPatches?: { turnId: string; patch: TurnPatch }[] },
        id: string,
        expectVersion?: number,
      ) =>
        store.turns.write({
          key,
          guard: "queue",
          now: clock.now(),
          expectVersion: expectVersion ?? (await store.directory.getSession(key))?.version ?? 0,
          webhooks: [delivery(id)],
          ...write,
        });
      const queued = newTurnRecord(key, "turn-2", { status: "queued", sequence: 2, createdAt: clock.now() });
      expect((await queue({ insertTurn: queued }, "msg_queued")).outcome).toBe("applied");
      const cancel = { turnPatches: [{ turnId: "turn-2", patch: { status: "cancelled" as const } }] };
      expect((await queue(cancel, "msg_stale", 999)).outcome).toBe("stale");
      expect((await queue(cancel, "msg_cancelled")).outcome).toBe("applied");
      const ids = (await claimAll("claimant-1")).map(({ deliveryId }) => deliveryId);
      expect(ids.sort()).toEqual(["msg_cancelled", "msg_queued"]);
    });

    it("hands out at most `limit`, oldest first, and what is enqueued alone", async () => {
      await store.webhooks.enqueue([delivery("msg_a")]);
      clock.advance(1_000);
      await store.webhooks.enqueue([delivery("msg_b"), delivery("msg_c")]);
      const first = await claimAll("claimant-1", 1);
      expect(first.map(({ deliveryId }) => deliveryId)).toEqual(["msg_a"]);
      const rest = await claimAll("claimant-2", 5);
      expect(rest.map(({ deliveryId }) => deliveryId).sort()).toEqual(["msg_b", "msg_c"]);
    });

    it("hands each delivery to one of the claimants claiming at once", async () => {
      const ids = Array.from({ length: 20 }, (_, index) => `msg_${index}`);
      await store.webhooks.enqueue(ids.map((id) => delivery(id)));
      const claims = await Promise.all(["c1", "c2", "c3"].map((claimant) => claimAll(claimant, 8)));
      const claimed = claims.flat().map(({ deliveryId }) => deliveryId);
      expect(claimed).toHaveLength(new Set(claimed).size);
      expect(claimed.sort()).toEqual([...ids].sort());
    });

    it("hands a delivery to another claimant once its claim expired, and then only that one settles it", async () => {
      await store.webhooks.enqueue([delivery("msg_1")]);
      expect(await claimAll("claimant-1")).toHaveLength(1);
      clock.advance(CLAIM_MS - 1);
      expect(await claimAll("claimant-2")).toEqual([]);
      clock.advance(1);
      expect(await claimAll("claimant-2")).toHaveLength(1);
      await store.webhooks.remove({ deliveryId: "msg_1", claimant: "claimant-1" });
      await store.webhooks.retryLater({ deliveryId: "msg_1", claimant: "claimant-1", delayMs: 0 });
      clock.advance(CLAIM_MS);
      // Neither move of the first claimant applied: the delivery is there, its attempts unchanged.
      expect(await claimAll("claimant-3")).toEqual([{ ...delivery("msg_1"), attempts: 0 }]);
      await store.webhooks.remove({ deliveryId: "msg_1", claimant: "claimant-3" });
      clock.advance(CLAIM_MS);
      expect(await claimAll("claimant-4")).toEqual([]);
    });

    it("makes a rescheduled delivery due again after its delay, one more attempt counted", async () => {
      await store.webhooks.enqueue([delivery("msg_1")]);
      await claimAll("claimant-1");
      await store.webhooks.retryLater({ deliveryId: "msg_1", claimant: "claimant-1", delayMs: 5_000 });
      clock.advance(4_999);
      expect(await claimAll("claimant-2")).toEqual([]);
      clock.advance(1);
      expect(await claimAll("claimant-2")).toEqual([{ ...delivery("msg_1"), attempts: 1 }]);
    });

    it("keeps deliveries when their session is deleted: the event happened", async () => {
      await start("owner-1", "turn-1", {}, key);
      await store.turns.write({
        key,
        guard: "lease",
        owner: "owner-1",
        now: clock.now(),
        turnPatches: [{ turnId: "turn-1", patch: { status: "completed" } }],
        sessionPatch: { openTurnId: null },
        releaseLease: true,
        webhooks: [delivery("msg_1")],
      });
      const read = await store.directory.getSession(key);
      await store.directory.deleteSession({ key, expectVersion: read?.version ?? 0, fileIds: [] });
      expect(await store.directory.getSession(key)).toBeUndefined();
      expect(await claimAll("claimant-1")).toHaveLength(1);
    });
  });
}
