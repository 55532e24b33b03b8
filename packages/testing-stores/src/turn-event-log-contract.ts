import type { SessionKey, SessionStore, TurnEventLog, TurnStatus } from "@aptix/core";
import { FIXTURE_TIME, newLease, newTurnRecord, startTurnFor } from "@aptix/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

interface TurnEventLogHarness {
  log: TurnEventLog;
  /** The session store over the same data: the turns whose end `prune` goes by. */
  sessions: SessionStore;
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
    let sessions: SessionStore;
    const alice = { principal: "alice", sessionId: "s" };
    let turnCount = 0;

    beforeEach(async () => {
      harness = await makeLog();
      log = harness.log;
      sessions = harness.sessions;
      turnCount = 0;
    });

    /** Stores turn `turnId` of `key` in `status`, ended at `completedAt` (null: not ended). */
    async function storeTurn(key: SessionKey, turnId: string, status: TurnStatus, completedAt: Date | null) {
      const owner = `owner-${++turnCount}`;
      const turn = newTurnRecord(key, turnId, { sequence: turnCount, createdAt: FIXTURE_TIME });
      await startTurnFor(sessions, turn, newLease(owner, 60_000));
      expect(
        await sessions.updateTurn({
          key,
          turnId,
          turnPatch: { status, completedAt },
          leaseOwner: owner,
          releaseLease: true,
        }),
      ).toBe(true);
    }

    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    });

    it("lists a round's deltas in seq order after the given seq, across appends", async () => {
      await log.append(alice, "t", [
        { round: 0, seq: 0, delta: "Hel" },
        { round: 0, seq: 1, delta: "lo" },
      ]);
      await log.append(alice, "t", [{ round: 0, seq: 2, delta: " 💡 world" }]);
      expect(await log.list(alice, "t", 0, -1)).toEqual([
        { round: 0, seq: 0, delta: "Hel" },
        { round: 0, seq: 1, delta: "lo" },
        { round: 0, seq: 2, delta: " 💡 world" },
      ]);
      expect(await log.list(alice, "t", 0, 1)).toEqual([{ round: 0, seq: 2, delta: " 💡 world" }]);
      expect(await log.list(alice, "t", 0, 2)).toEqual([]);
    });

    it("keeps rounds, turns and principals apart", async () => {
      await log.append(alice, "t", [{ round: 0, seq: 0, delta: "first round" }]);
      await log.append(alice, "t", [{ round: 1, seq: 0, delta: "second round" }]);
      await log.append(alice, "u", [{ round: 0, seq: 0, delta: "other turn" }]);
      await log.append({ principal: "bob", sessionId: "s" }, "t", [{ round: 0, seq: 0, delta: "bob's" }]);
      expect(await log.list(alice, "t", 1, -1)).toEqual([{ round: 1, seq: 0, delta: "second round" }]);
      expect((await log.list(alice, "t", 0, -1)).map((delta) => delta.delta)).toEqual(["first round"]);
      expect(await log.list({ principal: "carol", sessionId: "s" }, "t", 0, -1)).toEqual([]);
    });

    it("accepts an empty append", async () => {
      await log.append(alice, "t", []);
      expect(await log.list(alice, "t", 0, -1)).toEqual([]);
    });

    it("prunes every round of the turns that ended before the given time, and only those", async () => {
      const at = (seconds: number) => new Date(FIXTURE_TIME.getTime() + seconds * 1_000);
      const bob = { principal: "bob", sessionId: "s" };
      await storeTurn(alice, "early", "completed", at(1));
      await storeTurn(alice, "failed", "failed", at(2));
      await storeTurn(alice, "on-time", "completed", at(10));
      await storeTurn(alice, "running", "running", null);
      await storeTurn(alice, "awaiting", "awaiting_client_tools", null);
      await storeTurn(bob, "early", "completed", at(20));
      const turns = [
        [alice, "early"],
        [alice, "failed"],
        [alice, "on-time"],
        [alice, "running"],
        [alice, "awaiting"],
        [alice, "unknown"],
        [bob, "early"],
      ] as const;
      for (const [key, turnId] of turns) {
        await log.append(key, turnId, [
          { round: 0, seq: 0, delta: `${key.principal} ${turnId}` },
          { round: 1, seq: 0, delta: "next round" },
        ]);
      }
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
