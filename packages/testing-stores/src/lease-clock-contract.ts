import type { Clock, SessionStores } from "@aptix/core";
import {
  newCallRecord,
  newLease,
  newModeHistoryEntry,
  newSessionKey,
  newTurnRecord,
} from "@aptix/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/** What the lease-clock contract needs: stores over shared data, as server instances with their own clocks see it. */
export interface LeaseClockHarness {
  /**
   * A store over the same data as every other `instance` of this harness, as a server instance whose own
   * clock reads `clock` uses it: for a SQL store, one opened with `clock` as its instance clock and its leases
   * left to the database's clock. A store whose clock is the database (in memory) may answer the same store
   * every time: it must judge leases by the real time then.
   */
  instance(clock: Clock): Promise<SessionStores>;
  /** Releases whatever `makeHarness` and `instance` opened. */
  close(): Promise<void>;
}

/** Long enough that a few statements on a busy machine stay well inside it. */
const LEASE_MS = 1_500;
/** How far past an expiry the suite waits before it expects the lease free. */
const MARGIN_MS = 250;
const HOUR_MS = 3_600_000;
const CREATE = { conversationContextId: "conv-1", agentContextId: null, mode: "code" } as const;

/** A clock `skewMs` off the real time, as a server instance with a wrong clock has. */
function skewedClock(skewMs: number): Clock {
  return { now: () => new Date(Date.now() + skewMs) };
}

function sleepUntil(time: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, time - Date.now())));
}

/**
 * Leases judged by the store's clock (a database's `now()`), in real time: server instances whose clocks are
 * an hour apart still agree on who holds a session, for how long, and which leases expired. Call it at the top
 * level of a test file; each check takes a few seconds of real time.
 */
export function describeLeaseClockContract(
  name: string,
  makeHarness: () => Promise<LeaseClockHarness>,
): void {
  describe(`SessionStores lease clock contract: ${name}`, () => {
    let harness: LeaseClockHarness | undefined;
    let behind: { store: SessionStores; clock: Clock };
    let ahead: { store: SessionStores; clock: Clock };
    const key = newSessionKey("clock-session", "principal-a");

    beforeEach(async () => {
      harness = await makeHarness();
      const behindClock = skewedClock(-HOUR_MS);
      const aheadClock = skewedClock(HOUR_MS);
      behind = { store: await harness.instance(behindClock), clock: behindClock };
      ahead = { store: await harness.instance(aheadClock), clock: aheadClock };
    });

    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    });

    /**
     * A claim as `instance` sends it (its own clock's time as `now`), starting turn-1 with it when `start`:
     * the outcome of its transition.
     */
    async function claimBy(instance: { store: SessionStores; clock: Clock }, owner: string, start = false) {
      const now = instance.clock.now();
      const read = await instance.store.directory.getSession(key);
      const turn = newTurnRecord(key, "turn-1", { createdAt: now });
      const applied = await instance.store.turns.write({
        key,
        lease: newLease(owner, LEASE_MS),
        now,
        ...(read
          ? { guard: "version", expectVersion: read.version }
          : { guard: "create", create: { ...CREATE } }),
        ...(start ? { insertTurn: turn, sessionPatch: { openTurnId: turn.turnId } } : {}),
      });
      return applied.outcome;
    }

    /** A lease-guarded write of `owner`: whether it was let in. */
    function writeBy(instance: { store: SessionStores; clock: Clock }, owner: string) {
      return instance.store.turns.changeMode(newModeHistoryEntry(key, "turn-1", "code", "plan"), owner);
    }

    it("holds a lease for its duration by the store's clock, whatever the claimants' clocks say", async () => {
      const claimedAt = Date.now();
      expect(await claimBy(behind, "owner-behind")).toBe("applied");
      // An instance an hour ahead would have judged a lease set by the one behind long expired.
      expect(await claimBy(ahead, "owner-ahead")).toBe("busy");
      expect(await claimBy(behind, "owner-behind-2")).toBe("busy");

      await sleepUntil(claimedAt + LEASE_MS + MARGIN_MS);
      expect(await claimBy(ahead, "owner-ahead")).toBe("applied");
      expect(await writeBy(behind, "owner-behind")).toBe(false);
      expect(await writeBy(ahead, "owner-ahead")).toBe(true);
    });

    it("renews a lease for its duration from the store's now, whatever the holder's clock says", async () => {
      const claimedAt = Date.now();
      expect(await claimBy(behind, "owner-behind", true)).toBe("applied");

      await sleepUntil(claimedAt + LEASE_MS / 2);
      const renewedAt = Date.now();
      expect(
        await behind.store.turns.recordLlmCall({
          call: newCallRecord(key, "turn-1", 0),
          lease: newLease("owner-behind", LEASE_MS),
        }),
      ).toBe(true);

      // Past the first deadline, inside the renewed one.
      await sleepUntil(claimedAt + LEASE_MS + MARGIN_MS);
      expect(await claimBy(ahead, "owner-ahead")).toBe("busy");
      await sleepUntil(renewedAt + LEASE_MS + MARGIN_MS);
      expect(await claimBy(ahead, "owner-ahead")).toBe("applied");
    });

    it("finds expired leases by the store's clock, whatever the asking instance's clock says", async () => {
      const claimedAt = Date.now();
      expect(await claimBy(behind, "owner-behind", true)).toBe("applied");
      expect(await ahead.store.turns.findExpiredLeases({ expiredForMs: 0, limit: 10 })).toStrictEqual([]);

      await sleepUntil(claimedAt + LEASE_MS + MARGIN_MS);
      expect(await ahead.store.turns.findExpiredLeases({ expiredForMs: 0, limit: 10 })).toStrictEqual([key]);
      expect(await behind.store.turns.findExpiredLeases({ expiredForMs: 0, limit: 10 })).toStrictEqual([key]);
      expect(await ahead.store.turns.findExpiredLeases({ expiredForMs: HOUR_MS, limit: 10 })).toStrictEqual(
        [],
      );
    });
  });
}
