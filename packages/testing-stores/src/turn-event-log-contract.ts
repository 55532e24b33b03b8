import type { SessionKey, SessionStores, StoredDelta, TurnEventLog, TurnStatus } from "@aptix/core";
import {
  FIXTURE_TIME,
  newLease,
  newTurnRecord,
  startTurnFor,
  writeTurnWhileLeaseHeld,
} from "@aptix/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

interface TurnEventLogHarness {
  log: TurnEventLog;
  /** The session store over the same data: the turns whose end `prune` goes by. */
  sessions: SessionStores;
  close(): Promise<void>;
}

/** The behaviour every `TurnEventLog` shares. Call it at the top level of a test file. */
export function describeTurnEventLogContract(
  name: string,
  makeLog: () => Promise<TurnEventLogHarness>,
): void {
  describe(`TurnEventLog contract: ${name}`, () => {
    let harness: TurnEventLogHarness | undefined;
    let log: TurnEventLog;
    let sessions: SessionStores;
    const alice = { principal: "alice", sessionId: "s" };
    let turnCount = 0;

    beforeEach(async () => {
      harness = await makeLog();
      log = harness.log;
      sessions = harness.sessions;
      turnCount = 0;
    });

    /**
     * Starts turn `turnId` of `key` under a new lease, calls `whileHeld` with its owner, then ends the turn in
     * `status` at `completedAt` (null: not ended) and releases the lease.
     */
    async function storeTurn(
      key: SessionKey,
      turnId: string,
      status: TurnStatus,
      completedAt: Date | null,
      whileHeld: (leaseOwner: string) => Promise<unknown> = async () => {},
    ) {
      const owner = `owner-${++turnCount}`;
      const turn = newTurnRecord(key, turnId, { sequence: turnCount, createdAt: FIXTURE_TIME });
      await startTurnFor(sessions, turn, newLease(owner, 60_000));
      await whileHeld(owner);
      expect(
        await writeTurnWhileLeaseHeld(sessions, FIXTURE_TIME, {
          key,
          turnId,
          turnPatch: { status, completedAt },
          leaseOwner: owner,
          releaseLease: true,
        }),
      ).toBe(true);
    }

    /** Claims `key`'s lease for a new owner (a running turn "t-lease-<n>") and answers the owner. */
    async function holdLease(key: SessionKey): Promise<string> {
      const owner = `owner-${++turnCount}`;
      const turn = newTurnRecord(key, `t-lease-${turnCount}`, {
        sequence: turnCount,
        createdAt: FIXTURE_TIME,
      });
      await startTurnFor(sessions, turn, newLease(owner, 60_000));
      return owner;
    }

    const append = (key: SessionKey, turnId: string, leaseOwner: string, deltas: StoredDelta[]) =>
      log.append({ key, turnId, leaseOwner, deltas });

    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    });

    it("lists a round's deltas in seq order after the given seq, across appends", async () => {
      const owner = await holdLease(alice);
      await append(alice, "t", owner, [
        { round: 0, seq: 0, delta: "Hel" },
        { round: 0, seq: 1, delta: "lo" },
      ]);
      await append(alice, "t", owner, [{ round: 0, seq: 2, delta: " 💡 world" }]);
      expect(await log.list(alice, "t", 0, -1)).toEqual([
        { round: 0, seq: 0, delta: "Hel" },
        { round: 0, seq: 1, delta: "lo" },
        { round: 0, seq: 2, delta: " 💡 world" },
      ]);
      expect(await log.list(alice, "t", 0, 1)).toEqual([{ round: 0, seq: 2, delta: " 💡 world" }]);
      expect(await log.list(alice, "t", 0, 2)).toEqual([]);
    });

    it("lists a page: the first `limit` deltas after the given seq, in seq order", async () => {
      const owner = await holdLease(alice);
      // Appended out of order and in two writes: the page is by seq, not by arrival.
      await append(alice, "t", owner, [
        { round: 0, seq: 3, delta: "d" },
        { round: 0, seq: 1, delta: "b" },
      ]);
      await append(alice, "t", owner, [
        { round: 0, seq: 0, delta: "a" },
        { round: 0, seq: 2, delta: "c" },
        { round: 1, seq: 0, delta: "next round" },
      ]);
      expect((await log.list(alice, "t", 0, -1, 2)).map((delta) => delta.seq)).toEqual([0, 1]);
      expect((await log.list(alice, "t", 0, 1, 2)).map((delta) => delta.delta)).toEqual(["c", "d"]);
      expect((await log.list(alice, "t", 0, 2, 5)).map((delta) => delta.delta)).toEqual(["d"]);
      expect(await log.list(alice, "t", 0, 3, 2)).toEqual([]);
    });

    it("keeps rounds, turns and principals apart", async () => {
      const bob = { principal: "bob", sessionId: "s" };
      const [owner, bobs] = [await holdLease(alice), await holdLease(bob)];
      await append(alice, "t", owner, [{ round: 0, seq: 0, delta: "first round" }]);
      await append(alice, "t", owner, [{ round: 1, seq: 0, delta: "second round" }]);
      await append(alice, "u", owner, [{ round: 0, seq: 0, delta: "other turn" }]);
      await append(bob, "t", bobs, [{ round: 0, seq: 0, delta: "bob's" }]);
      expect(await log.list(alice, "t", 1, -1)).toEqual([{ round: 1, seq: 0, delta: "second round" }]);
      expect((await log.list(alice, "t", 0, -1)).map((delta) => delta.delta)).toEqual(["first round"]);
      expect(await log.list({ principal: "carol", sessionId: "s" }, "t", 0, -1)).toEqual([]);
    });

    it("keeps a compaction among the deltas, in order, as it was appended", async () => {
      const owner = await holdLease(alice);
      const deltas: StoredDelta[] = [
        { round: 0, seq: 0, delta: "Hel" },
        {
          round: 0,
          seq: 1,
          delta: '{"tokensBefore":7000,"tokensAfter":900,"reason":"threshold"}',
          event: "context.compacted",
        },
        { round: 0, seq: 2, delta: "lo" },
      ];
      await append(alice, "t", owner, deltas);
      expect(await log.list(alice, "t", 0, -1)).toEqual(deltas);
    });

    it("keeps every other session's deltas when one append holds text the store refuses", async () => {
      // Appends asked for at once may share a statement (the drizzle log groups them): a U+0000, which Postgres
      // refuses, in one must fail at most that one.
      const keys = ["a", "b", "c", "d"].map((sessionId) => ({ principal: `p-${sessionId}`, sessionId }));
      const owners = await Promise.all(keys.map((key) => holdLease(key)));
      const texts = ["first \u{1F4A1}", "refused \u0000", "third", "fourth"];
      const appended = await Promise.allSettled(
        keys.map((key, index) =>
          append(key, "t", owners[index] as string, [{ round: 0, seq: 0, delta: texts[index] as string }]),
        ),
      );
      for (const index of [0, 2, 3]) {
        expect(appended[index]).toEqual({ status: "fulfilled", value: true });
        expect(await log.list(keys[index] as SessionKey, "t", 0, -1)).toEqual([
          { round: 0, seq: 0, delta: texts[index] },
        ]);
      }
    });

    it("accepts an empty append", async () => {
      await append(alice, "t", await holdLease(alice), []);
      expect(await log.list(alice, "t", 0, -1)).toEqual([]);
    });

    it("appends only while the given owner holds the session's lease (docs/security.md, delete means gone)", async () => {
      const delta = (seq: number, text: string) => [{ round: 0, seq, delta: text }];
      const owner = await holdLease(alice);
      expect(await append(alice, "t", owner, delta(0, "held"))).toBe(true);
      // Another owner, or a session that does not exist, has no lease to write under.
      expect(await append(alice, "t", "someone-else", delta(1, "not held"))).toBe(false);
      expect(
        await append({ principal: "alice", sessionId: "none" }, "t", owner, delta(0, "no session")),
      ).toBe(false);
      // The same rows again (a retried flush) keep the first text, and the lease still holds.
      expect(await append(alice, "t", owner, delta(0, "again"))).toBe(true);
      expect(await log.list(alice, "t", 0, -1)).toEqual(delta(0, "held"));
      // Released, the lease is no one's: its former owner writes nothing more.
      await sessions.turns.releaseLease(alice, owner);
      expect(await append(alice, "t", owner, delta(2, "after release"))).toBe(false);
      expect(await log.list(alice, "t", 0, -1)).toEqual(delta(0, "held"));
    });

    it("keeps each of appends sent at once to its own lease: a stale owner's writes nothing, the others all theirs", async () => {
      const bob = { principal: "bob", sessionId: "s" };
      const [owner, bobs] = [await holdLease(alice), await holdLease(bob)];
      const delta = (text: string) => [{ round: 0, seq: 0, delta: text }];
      // Sent together, so a store that writes waiting appends in one statement has them in one.
      const answers = await Promise.all([
        append(alice, "t", owner, delta("alice's")),
        append(bob, "t", "stale-owner", delta("stale")),
        append(bob, "u", bobs, delta("bob's")),
        append(alice, "u", "stale-owner", delta("stale")),
      ]);
      expect(answers).toEqual([true, false, true, false]);
      expect(await log.list(alice, "t", 0, -1)).toEqual(delta("alice's"));
      expect(await log.list(bob, "t", 0, -1)).toEqual([]);
      expect(await log.list(bob, "u", 0, -1)).toEqual(delta("bob's"));
      expect(await log.list(alice, "u", 0, -1)).toEqual([]);
    });

    it("prunes every round of the turns that ended before the given time, and only those", async () => {
      const at = (seconds: number) => new Date(FIXTURE_TIME.getTime() + seconds * 1_000);
      const bob = { principal: "bob", sessionId: "s" };
      const deltasOf = (key: SessionKey, turnId: string) => [
        { round: 0, seq: 0, delta: `${key.principal} ${turnId}` },
        { round: 1, seq: 0, delta: "next round" },
      ];
      // Each turn's deltas under its own lease; the unknown turn's under the last one's.
      const stored =
        (key: SessionKey, ...turnIds: string[]) =>
        (owner: string) =>
          Promise.all(turnIds.map((turnId) => append(key, turnId, owner, deltasOf(key, turnId))));
      await storeTurn(alice, "early", "completed", at(1), stored(alice, "early"));
      await storeTurn(alice, "failed", "failed", at(2), stored(alice, "failed"));
      await storeTurn(alice, "on-time", "completed", at(10), stored(alice, "on-time"));
      await storeTurn(alice, "running", "running", null, stored(alice, "running"));
      await storeTurn(alice, "awaiting", "awaiting_client_tools", null, stored(alice, "awaiting", "unknown"));
      await storeTurn(bob, "early", "completed", at(20), stored(bob, "early"));
      const turns = [
        [alice, "early"],
        [alice, "failed"],
        [alice, "on-time"],
        [alice, "running"],
        [alice, "awaiting"],
        [alice, "unknown"],
        [bob, "early"],
      ] as const;
      const kept = async () => {
        const left: string[] = [];
        for (const [key, turnId] of turns) {
          const deltas = [...(await log.list(key, turnId, 0, -1)), ...(await log.list(key, turnId, 1, -1))];
          if (deltas.length > 0) left.push(`${key.principal} ${turnId}`);
        }
        return left;
      };

      // Ended strictly before `endedBefore`: `on-time` ended at it and stays.
      expect(await log.prune({ endedBefore: at(10), limit: 10 })).toBe(2);
      expect(await kept()).toEqual([
        "alice on-time",
        "alice running",
        "alice awaiting",
        "alice unknown",
        "bob early",
      ]);
      expect(await log.prune({ endedBefore: at(10), limit: 10 })).toBe(0);

      // At most `limit` turns per call; turns not ended, and turns the session store does not know, stay.
      expect(await log.prune({ endedBefore: at(3_600), limit: 1 })).toBe(1);
      expect(await log.prune({ endedBefore: at(3_600), limit: 1 })).toBe(1);
      expect(await log.prune({ endedBefore: at(3_600), limit: 1 })).toBe(0);
      expect(await kept()).toEqual(["alice running", "alice awaiting", "alice unknown"]);
    });
  });
}
