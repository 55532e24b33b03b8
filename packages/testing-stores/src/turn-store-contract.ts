import type {
  SessionKey,
  SessionPatch,
  SessionRecord,
  SessionStores,
  TranscriptItem,
  TurnPatch,
  TurnRecord,
} from "@aptix/core";
import {
  type ManualClock,
  newCallRecord,
  newContinuationResult,
  newCursor,
  newFailedCallRecord,
  newFailureResult,
  newFileRef,
  newFinalResult,
  newLease,
  newModeHistoryEntry,
  newPendingToolCalls,
  newRound,
  newSessionKey,
  newTurnRecord,
  sampleTranscriptItems,
  writeTurnWhileLeaseHeld,
} from "@aptix/core/testing";
import { describe, expect, it } from "vitest";
import { CREATE, LEASE_MS, type SessionStoresHarness, sessionSuite } from "./session-stores-harness.js";

export interface TurnStoreContractOptions {
  /**
   * A second store over the same data as the one the current test's `makeStore` answered, but on its own
   * database connection, so concurrent claims race in the database rather than in one connection's queue.
   * The harness's `close()` must close it too.
   */
  newConnection?: () => Promise<SessionStores>;
}

/**
 * The behaviour every `TurnStore` shares (see `InMemoryTurnStore` for the rules in prose): claims and their
 * guards, leases, a running turn's writes. Call it at the top level of a test file; each check is its own `it`
 * and starts from empty stores.
 */
export function describeTurnStoreContract(
  name: string,
  makeStore: () => Promise<SessionStoresHarness>,
  options: TurnStoreContractOptions = {},
): void {
  describe(`TurnStore contract: ${name}`, () => {
    let store: SessionStores;
    let clock: ManualClock;
    const { key, leaseFor, touchTurn, transition, claim, start, snapshot, progress } = sessionSuite(
      makeStore,
      (ready) => {
        ({ store, clock } = ready);
      },
    );

    it("creates a missing session with its first transition, and answers stale to one expecting a version", async () => {
      const now = clock.now();
      const lease = leaseFor("owner-1");
      expect(await store.turns.write({ guard: "version", key, lease, now, expectVersion: 1 })).toEqual({
        outcome: "stale",
      });
      expect(await store.directory.getSession(key)).toBeUndefined();
      expect(await store.turns.readTurnState(key, "turn-1")).toStrictEqual({});

      const result = await store.turns.write({ guard: "create", key, lease, now, create: { ...CREATE } });
      const expected: SessionRecord = {
        principal: key.principal,
        sessionId: key.sessionId,
        conversationContextId: "conv-1",
        agentContextId: "agent-1",
        mode: "code",
        solutionContextText: null,
        cursor: { responseId: null, pendingInput: [], transcriptLength: 0 },
        openTurnId: null,
        turnCount: 0,
        version: 1,
        createdAt: now,
        updatedAt: now,
      };
      expect(result).toStrictEqual({ outcome: "applied", session: expected });
      expect(await store.directory.getSession(key)).toStrictEqual(expected);
      expect(await store.turns.readTurnState(key, "turn-1")).toStrictEqual({ session: expected });

      // A session that exists is stale to a write that would create it, even once its lease is free.
      clock.advance(LEASE_MS);
      const create = { conversationContextId: "conv-x", agentContextId: null, mode: "review" };
      expect(
        await store.turns.write({ guard: "create", key, lease: leaseFor("owner-2"), now, create }),
      ).toEqual({
        outcome: "stale",
      });
      expect(await store.directory.getSession(key)).toStrictEqual(expected);
    });

    it("creates the session, inserts its turn, patches it and appends a mode change in one step", async () => {
      const now = clock.now();
      const turn = newTurnRecord(key, "turn-1", { sequence: 1, createdAt: now, updatedAt: now });
      const cursor = newCursor({ responseId: "resp_0", transcriptLength: 2 });
      const entry = newModeHistoryEntry(key, "turn-1", "code", "plan");
      const result = await store.turns.write({
        guard: "create",
        key,
        lease: leaseFor("owner-1"),
        now,
        create: { ...CREATE },
        insertTurn: turn,
        sessionPatch: { openTurnId: "turn-1", cursor, solutionContextText: "ctx", mode: "plan" },
        modeChange: entry,
      });
      const session: SessionRecord = {
        principal: key.principal,
        sessionId: key.sessionId,
        ...CREATE,
        mode: "plan",
        solutionContextText: "ctx",
        cursor,
        openTurnId: "turn-1",
        turnCount: 1,
        version: 1,
        createdAt: now,
        updatedAt: now,
      };
      expect(result).toStrictEqual({ outcome: "applied", session });
      expect(await store.turns.readTurnState(key, "turn-1")).toStrictEqual({ session, turn });
      expect(await store.directory.listModeHistory(key)).toStrictEqual([entry]);
      // The lease is the claimant's: others are busy, its writes go through.
      expect((await transition("owner-2")).outcome).toBe("busy");
      expect(await touchTurn("owner-1")).toBe(true);
    });

    it("readTurnState answers the named turn and the session's open turn, when another", async () => {
      const first = await start("owner-1", "turn-1", {
        status: "awaiting_client_tools",
        pending: newPendingToolCalls(),
      });
      const session = await store.directory.getSession(key);
      expect(await store.turns.readTurnState(key, "turn-1")).toStrictEqual({ session, turn: first });
      expect(await store.turns.readTurnState(key, "turn-9")).toStrictEqual({ session, openTurn: first });
      const second = await start("owner-1", "turn-2", { sequence: 2 });
      const after = await store.directory.getSession(key);
      expect(await store.turns.readTurnState(key, "turn-1")).toStrictEqual({
        session: after,
        turn: first,
        openTurn: second,
      });
      expect(await store.turns.readTurnState(newSessionKey("session-9"), "turn-1")).toStrictEqual({});
    });

    it("answers busy while the lease is held, even to the same owner, writing nothing", async () => {
      await start("owner-1", "turn-1");
      const before = await snapshot(key, ["turn-1"]);
      const turn2 = newTurnRecord(key, "turn-2", { sequence: 2, createdAt: clock.now() });
      expect(await transition("owner-2", { insertTurn: turn2 })).toEqual({ outcome: "busy" });
      expect(await transition("owner-1")).toEqual({ outcome: "busy" });
      clock.advance(LEASE_MS - 1);
      expect(await transition("owner-2")).toEqual({ outcome: "busy" });
      expect(await snapshot(key, ["turn-1", "turn-2"])).toStrictEqual({ ...before, calls: [[], []] });
    });

    it("an override takes a held lease and gives it back in one step, guarded by the version alone", async () => {
      await start("owner-1", "turn-1");
      const read = await store.directory.getSession(key);
      const version = read?.version ?? 0;
      const cancel = (expectVersion: number) =>
        store.turns.write({
          guard: "override",
          key,
          now: clock.now(),
          expectVersion,
          turnPatches: [{ turnId: "turn-1", patch: { status: "cancelled" } }],
          sessionPatch: { openTurnId: null },
        });
      expect(await cancel(version - 1)).toEqual({ outcome: "stale" });
      const cancelled = await cancel(version);
      expect(cancelled).toMatchObject({
        outcome: "applied",
        session: { openTurnId: null, version: version + 1 },
      });
      expect((await store.turns.getTurn(key, "turn-1"))?.status).toBe("cancelled");
      // The holder lost its lease, and the session is free at once for the next claim.
      expect(await touchTurn("owner-1")).toBe(false);
      expect((await transition("owner-2")).outcome).toBe("applied");
    });

    it("queues turns while the lease is held, guarded by the version alone, leaving the lease as it is", async () => {
      await start("owner-1", "turn-1");
      const queue = async (
        write: { insertTurn?: TurnRecord; turnPatches?: { turnId: string; patch: TurnPatch }[] },
        expectVersion?: number,
      ) => {
        const read = await store.directory.getSession(key);
        return store.turns.write({
          guard: "queue",
          key,
          now: clock.now(),
          expectVersion: expectVersion ?? read?.version ?? 0,
          ...write,
        });
      };
      const queued = (turnId: string, sequence: number) =>
        newTurnRecord(key, turnId, { status: "queued", sequence, createdAt: clock.now() });
      const before = await store.directory.getSession(key);
      expect(await queue({ insertTurn: queued("turn-2", 2) }, (before?.version ?? 0) - 1)).toEqual({
        outcome: "stale",
      });
      const second = queued("turn-2", 2);
      expect(await queue({ insertTurn: second })).toMatchObject({
        outcome: "applied",
        session: { turnCount: 2, openTurnId: "turn-1", version: (before?.version ?? 0) + 1 },
      });
      const third = queued("turn-3", 3);
      expect((await queue({ insertTurn: third })).outcome).toBe("applied");
      expect((await queue({ insertTurn: queued("turn-3", 4) })).outcome).toBe("stale");
      // The running turn's holder keeps its lease: its writes go on, and nobody else claims the session.
      expect(await touchTurn("owner-1")).toBe(true);
      expect(await transition("owner-2")).toEqual({ outcome: "busy" });
      const read = await store.turns.readTurnState(key, "turn-9");
      expect(read.queued).toStrictEqual({ count: 2, next: second });
      expect(await store.turns.findStartableQueued(10)).toEqual([]);
      // A queued turn ended: the next one is next.
      expect(
        (await queue({ turnPatches: [{ turnId: "turn-2", patch: { status: "cancelled" } }] })).outcome,
      ).toBe("applied");
      expect((await store.turns.readTurnState(key, "turn-1")).queued).toMatchObject({
        count: 1,
        next: { turnId: "turn-3" },
      });
      // Once no turn holds the session, its first queued turn can start; another session's is found too.
      await writeTurnWhileLeaseHeld(store, clock.now(), {
        key,
        turnId: "turn-1",
        turnPatch: { status: "completed" },
        sessionPatch: { openTurnId: null },
        leaseOwner: "owner-1",
        releaseLease: true,
      });
      expect(await store.turns.findStartableQueued(10)).toEqual([{ ...key, turnId: "turn-3" }]);
      expect(await store.turns.findStartableQueued(0)).toEqual([]);
      const cursor = newCursor({ responseId: "resp-after-1" });
      const started = await transition("owner-3", {
        turnPatches: [
          { turnId: "turn-3", patch: { status: "running", startCursor: cursor, mode: "review" } },
        ],
        sessionPatch: { openTurnId: "turn-3" },
      });
      expect(started).toMatchObject({ outcome: "applied", session: { openTurnId: "turn-3" } });
      expect(await store.turns.getTurn(key, "turn-3")).toMatchObject({
        status: "running",
        startCursor: cursor,
        mode: "review",
      });
      expect((await store.turns.readTurnState(key, "turn-3")).queued).toBeUndefined();
      expect(await store.turns.findStartableQueued(10)).toEqual([]);
    });

    it("answers stale when the version moved since the read, or the turn to insert exists, writing nothing", async () => {
      const created = await claim("owner-1");
      await store.turns.releaseLease(key, "owner-1");
      const turn1 = newTurnRecord(key, "turn-1", { createdAt: clock.now() });
      // The release was a write: the version read with the claim is stale.
      const lease = leaseFor("owner-2");
      const now = clock.now();
      expect(
        await store.turns.write({
          guard: "version",
          key,
          lease,
          now,
          expectVersion: created.version,
          insertTurn: turn1,
        }),
      ).toEqual({ outcome: "stale" });
      await start("owner-2", "turn-1");
      await store.turns.releaseLease(key, "owner-2");
      const before = await snapshot(key, ["turn-1"]);
      const again = newTurnRecord(key, "turn-1", { sequence: 2, status: "completed", createdAt: now });
      expect(
        await transition("owner-3", { insertTurn: again, sessionPatch: { mode: "plan", openTurnId: null } }),
      ).toEqual({ outcome: "stale" });
      expect(await snapshot(key, ["turn-1"])).toStrictEqual(before);
      // Nothing claimed either.
      expect((await transition("owner-4")).outcome).toBe("applied");
    });

    it("lets a new claimant take an expired lease (expiresAt <= now), locking out the old holder", async () => {
      await start("owner-1", "turn-1");
      clock.advance(LEASE_MS);
      const session = await claim("owner-2");
      expect(session.turnCount).toBe(1);
      const entry = newModeHistoryEntry(key, "turn-1", "code", "plan");
      expect(await store.turns.changeMode(entry, "owner-1")).toBe(false);
      expect(await store.turns.changeMode(entry, "owner-2")).toBe(true);
    });

    it("abandons or fails the open turn, starts the next and gives the lease back as written, in one step", async () => {
      const created = await claim("owner-1");
      const first = await start("owner-1", "turn-1", {}, key, {
        openTurnId: "turn-1",
        solutionContextText: "latched",
      });
      const pending = newPendingToolCalls();
      clock.advance(1_000);
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: { status: "awaiting_client_tools", pending },
          sessionPatch: { cursor: newCursor({ responseId: "resp_1", transcriptLength: 4 }) },
          leaseOwner: "owner-1",
          releaseLease: true,
        }),
      ).toBe(true);

      clock.advance(5_000);
      const startedAt = clock.now();
      const second = newTurnRecord(key, "turn-2", {
        sequence: 2,
        createdAt: startedAt,
        startCursor: pending.resumeCursor,
      });
      const sessionPatch: SessionPatch = {
        openTurnId: "turn-2",
        cursor: pending.resumeCursor,
        solutionContextText: null,
        mode: "plan",
      };
      const abandon: TurnPatch = { status: "abandoned", pending: null, completedAt: startedAt };
      const result = await transition("owner-2", {
        insertTurn: second,
        turnPatches: [{ turnId: "turn-1", patch: abandon }],
        sessionPatch,
      });
      expect(await store.turns.getTurn(key, "turn-1")).toStrictEqual({
        ...first,
        status: "abandoned",
        pending: null,
        updatedAt: startedAt,
        completedAt: startedAt,
      });
      expect(await store.turns.getTurn(key, "turn-2")).toStrictEqual(second);
      const session = await store.directory.getSession(key);
      expect(result).toStrictEqual({ outcome: "applied", session });
      expect(session).toStrictEqual({
        ...created,
        ...sessionPatch,
        turnCount: 2,
        version: (session as SessionRecord).version,
        updatedAt: startedAt,
      });

      // The reaper's, once the lease expired: the turn fails and the lease goes back in the same step (a claim
      // alone keeps updatedAt).
      clock.advance(LEASE_MS);
      const failedAt = clock.now();
      const failure = newFailureResult();
      const failed = await transition("owner-3", {
        turnPatches: [
          { turnId: "turn-2", patch: { status: "failed", error: failure.errors[0], completedAt: failedAt } },
        ],
        sessionPatch: { openTurnId: null },
        releaseLease: true,
      });
      expect(failed.outcome).toBe("applied");
      expect(await store.turns.getTurn(key, "turn-2")).toMatchObject({
        status: "failed",
        updatedAt: failedAt,
      });
      expect((await claim("owner-4")).updatedAt).toStrictEqual(failedAt);
    });

    it("goes up one version with every write, and not with a refused one", async () => {
      const versions: number[] = [];
      const version = async () => versions.push((await store.directory.getSession(key))?.version ?? 0);
      await claim("owner-1");
      await version();
      await store.turns.releaseLease(key, "owner-1");
      await version();
      await start("owner-1", "turn-1");
      await version();
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: { llmCallCount: 1 },
          leaseOwner: "owner-1",
        }),
      ).toBe(true);
      await version();
      expect(
        await store.turns.recordLlmCall({
          call: newCallRecord(key, "turn-1", 0),
          lease: leaseFor("owner-1"),
        }),
      ).toBe(true);
      await version();
      expect(
        await store.turns.changeMode(newModeHistoryEntry(key, "turn-1", "code", "plan"), "owner-1"),
      ).toBe(true);
      await version();
      // Refused: another owner's writes, a transition while busy, a release by someone else.
      expect(await touchTurn("owner-2")).toBe(false);
      expect((await transition("owner-2")).outcome).toBe("busy");
      await store.turns.releaseLease(key, "owner-2");
      await version();
      expect(versions).toEqual([1, 2, 3, 4, 5, 6, 6]);
    });

    it("applies a lease-guarded transition whatever the version, answering the session after it, without renewing the lease", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-1");
      const before = await store.directory.getSession(key);
      const settledAt = clock.advance(1_000);
      const settled = await store.turns.write({
        guard: "lease",
        key,
        owner: "owner-1",
        now: settledAt,
        turnPatches: [{ turnId: "turn-1", patch: { llmCallCount: 3 } }],
        sessionPatch: { mode: "plan" },
      });
      expect(settled).toStrictEqual({
        outcome: "applied",
        session: { ...before, mode: "plan", version: (before?.version ?? 0) + 1, updatedAt: settledAt },
      });
      expect(await store.turns.getTurn(key, "turn-1")).toMatchObject({
        llmCallCount: 3,
        updatedAt: settledAt,
      });
      // Not renewed: the lease claimed with the turn runs out as it would have.
      clock.advance(LEASE_MS);
      expect((await transition("owner-2")).outcome).toBe("applied");
      const lost = await store.turns.write({
        guard: "lease",
        key,
        owner: "owner-1",
        now: clock.now(),
        turnPatches: [{ turnId: "turn-1", patch: { status: "failed" } }],
      });
      expect(lost).toStrictEqual({ outcome: "stale" });
    });

    it("lets the holder keep writing after its lease expired, until another claim takes it", async () => {
      await claim("owner-1");
      clock.advance(2 * LEASE_MS);
      await start("owner-1", "turn-1");
      clock.advance(2 * LEASE_MS);
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
          leaseOwner: "owner-1",
        }),
      ).toBe(true);
      await claim("owner-2");
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: { status: "failed" },
          leaseOwner: "owner-1",
        }),
      ).toBe(false);
      expect((await store.turns.getTurn(key, "turn-1"))?.status).toBe("running");
    });

    it("applies exactly one of two concurrent transitions creating a session", async () => {
      const other = options.newConnection === undefined ? store : await options.newConnection();
      const write = (owner: string) =>
        ({ guard: "create", key, lease: leaseFor(owner), now: clock.now(), create: { ...CREATE } }) as const;
      const results = await Promise.all([
        store.turns.write(write("owner-a")),
        other.turns.write(write("owner-b")),
      ]);
      // The loser sees the session the winner created: busy (its lease held) or stale (it exists).
      const outcomes = results.map((result) => result.outcome);
      expect(outcomes.filter((outcome) => outcome === "applied")).toHaveLength(1);
      const winner = results[0]?.outcome === "applied" ? "owner-a" : "owner-b";
      const loser = winner === "owner-a" ? "owner-b" : "owner-a";
      expect((await store.directory.getSession(key))?.turnCount).toBe(0);
      const entry = newModeHistoryEntry(key, "turn-1", "code", "plan");
      expect(await store.turns.changeMode(entry, loser)).toBe(false);
      expect(await store.turns.changeMode(entry, winner)).toBe(true);
    });

    it("applies exactly one of two concurrent transitions taking an expired lease", async () => {
      const session = await claim("owner-0");
      clock.advance(LEASE_MS + 1);
      const other = options.newConnection === undefined ? store : await options.newConnection();
      const write = (owner: string) =>
        ({
          guard: "version",
          key,
          lease: leaseFor(owner),
          now: clock.now(),
          expectVersion: session.version,
        }) as const;
      const results = await Promise.all([
        store.turns.write(write("owner-a")),
        other.turns.write(write("owner-b")),
      ]);
      expect(results.map((result) => result.outcome).filter((outcome) => outcome === "applied")).toHaveLength(
        1,
      );
      const winner = results[0]?.outcome === "applied" ? "owner-a" : "owner-b";
      const entry = newModeHistoryEntry(key, "turn-1", "code", "plan");
      expect(await store.turns.changeMode(entry, "owner-0")).toBe(false);
      expect(await store.turns.changeMode(entry, winner)).toBe(true);
    });

    it("caps the turns a principal runs at once at maxRunningTurns: rate_limited, writing nothing", async () => {
      const cap = { maxRunningTurns: 2 };
      const session = (id: string, principal = key.principal) => newSessionKey(id, principal);
      const begin = async (k: SessionKey, owner: string, turnId: string) => {
        const read = await store.directory.getSession(k);
        const turn = newTurnRecord(k, turnId, {
          sequence: (read?.turnCount ?? 0) + 1,
          createdAt: clock.now(),
        });
        return (
          await transition(owner, { insertTurn: turn, sessionPatch: { openTurnId: turnId }, ...cap }, k)
        ).outcome;
      };
      /** Ends `turnId` of `k` as `status`, giving its lease up (an awaiting turn holds none). */
      const settle = (k: SessionKey, turnId: string, owner: string, status: TurnRecord["status"]) =>
        writeTurnWhileLeaseHeld(store, clock.now(), {
          key: k,
          turnId,
          turnPatch: { status },
          ...(status === "awaiting_client_tools" ? {} : { sessionPatch: { openTurnId: null } }),
          leaseOwner: owner,
          releaseLease: true,
        });

      expect(await begin(session("s1"), "o1", "t1")).toBe("applied");
      expect(await begin(session("s2"), "o2", "t1")).toBe("applied");
      // At the cap: a new session is not even created.
      expect(await begin(session("s3"), "o3", "t1")).toBe("rate_limited");
      expect(await store.directory.getSession(session("s3"))).toBeUndefined();
      // Another principal is not counted; a write without the cap is not refused.
      expect(await begin(session("s1", "principal-b"), "o4", "t1")).toBe("applied");
      expect((await transition("o9", {}, session("s9"))).outcome).toBe("applied");

      // A turn that ended frees its slot.
      expect(await settle(session("s1"), "t1", "o1", "completed")).toBe(true);
      expect(await begin(session("s3"), "o3", "t1")).toBe("applied");
      const before = await snapshot(session("s1"), ["t1"]);
      expect(await begin(session("s1"), "o5", "t2")).toBe("rate_limited");
      expect(await snapshot(session("s1"), ["t1"])).toStrictEqual(before);
      expect(await store.turns.getTurn(session("s1"), "t2")).toBeUndefined();

      // A turn awaiting client tools holds no lease and does not count; resuming it counts again.
      expect(await settle(session("s3"), "t1", "o3", "awaiting_client_tools")).toBe(true);
      expect(await begin(session("s1"), "o5", "t2")).toBe("applied");
      const resume = () =>
        transition(
          "o6",
          { turnPatches: [{ turnId: "t1", patch: { status: "running" } }], ...cap },
          session("s3"),
        );
      const awaiting = await store.turns.getTurn(session("s3"), "t1");
      expect(await resume()).toEqual({ outcome: "rate_limited" });
      expect(await store.turns.getTurn(session("s3"), "t1")).toStrictEqual(awaiting);

      // A running turn whose lease expired (its instance stopped) does not count either.
      clock.advance(LEASE_MS);
      expect((await resume()).outcome).toBe("applied");
      expect(await begin(session("s4"), "o8", "t1")).toBe("applied");
      expect(await begin(session("s5"), "o8", "t1")).toBe("rate_limited");
    });

    it("refuses every lease-guarded write of a non-owner and changes nothing", async () => {
      await start("owner-1", "turn-1");
      const items = sampleTranscriptItems().slice(0, 3);
      expect(
        await store.turns.recordLlmCall({
          call: newCallRecord(key, "turn-1", 0),
          progress: progress(items, 0, newCursor({ responseId: "resp_0", transcriptLength: 3 })),
          lease: leaseFor("owner-1"),
        }),
      ).toBe(true);
      expect(
        await store.turns.changeMode(newModeHistoryEntry(key, "turn-1", "code", "plan"), "owner-1"),
      ).toBe(true);
      const before = await snapshot(key, ["turn-1", "turn-2"]);

      const intruder = "owner-2";
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: { status: "failed", error: newFailureResult().errors[0] },
          sessionPatch: { openTurnId: null, mode: "review" },
          leaseOwner: intruder,
          releaseLease: true,
        }),
      ).toBe(false);
      expect(
        await store.turns.recordLlmCall({
          call: newCallRecord(key, "turn-1", 1),
          progress: progress(
            sampleTranscriptItems(),
            0,
            newCursor({ responseId: "resp_x", transcriptLength: 7 }),
          ),
          lease: newLease(intruder, 100 * LEASE_MS),
        }),
      ).toBe(false);
      expect(
        await store.turns.changeMode(newModeHistoryEntry(key, "turn-1", "plan", "review"), intruder),
      ).toBe(false);
      await store.turns.releaseLease(key, intruder);

      expect(await snapshot(key, ["turn-1", "turn-2"])).toStrictEqual(before);
      // The refused writes neither released nor extended the holder's lease.
      expect(await transition("owner-3")).toEqual({ outcome: "busy" });
      clock.advance(LEASE_MS);
      expect((await transition("owner-3")).outcome).toBe("applied");
    });

    it("refuses writes to a session that does not exist", async () => {
      expect(await touchTurn("owner-1")).toBe(false);
      expect(
        await store.turns.recordLlmCall({
          call: newCallRecord(key, "turn-1", 0),
          lease: leaseFor("owner-1"),
        }),
      ).toBe(false);
      expect(
        await store.turns.changeMode(newModeHistoryEntry(key, "turn-1", "code", "plan"), "owner-1"),
      ).toBe(false);
      expect(await store.directory.getSession(key)).toBeUndefined();
      expect(await store.turns.getTurn(key, "turn-1")).toBeUndefined();
    });

    it("a lease-guarded transition refuses a missing turn, changing nothing", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-1");
      const before = await snapshot(key, ["turn-1"]);
      clock.advance(1_000);
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-404",
          turnPatch: { status: "failed" },
          sessionPatch: { openTurnId: null },
          leaseOwner: "owner-1",
          releaseLease: true,
        }),
      ).toBe(false);
      expect(await snapshot(key, ["turn-1"])).toStrictEqual(before);
      expect(await transition("owner-2")).toEqual({ outcome: "busy" });

      const completedAt = clock.now();
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: { status: "completed", completedAt },
          leaseOwner: "owner-1",
        }),
      ).toBe(true);
      const turn = await store.turns.getTurn(key, "turn-1");
      expect(turn?.status).toBe("completed");
      expect(turn?.updatedAt).toStrictEqual(completedAt);
      expect(turn?.completedAt).toStrictEqual(completedAt);
    });

    it("releaseLease frees the session for the next claim", async () => {
      await claim("owner-1", key, 100 * LEASE_MS);
      await start("owner-1", "turn-1");
      const usage = { inputTokens: 5, outputTokens: 6, totalTokens: 11 };
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: { usage },
          leaseOwner: "owner-1",
        }),
      ).toBe(true);
      expect(await transition("owner-2")).toEqual({ outcome: "busy" });

      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: { status: "completed", completedAt: clock.now() },
          sessionPatch: { openTurnId: null },
          leaseOwner: "owner-1",
          releaseLease: true,
        }),
      ).toBe(true);
      const session = await claim("owner-2");
      expect(session.openTurnId).toBeNull();
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: { usage },
          leaseOwner: "owner-1",
        }),
      ).toBe(false);
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: { usage },
          leaseOwner: "owner-2",
        }),
      ).toBe(true);
    });

    it("releaseLease gives the lease up for its holder only", async () => {
      await claim("owner-1", key, 100 * LEASE_MS);
      await start("owner-1", "turn-1");
      const before = await snapshot(key, ["turn-1"]);
      await store.turns.releaseLease(key, "owner-2");
      expect(await transition("owner-2")).toEqual({ outcome: "busy" });
      await store.turns.releaseLease(key, "owner-1");
      // Only the lease (and so the version) changed: the session keeps its open turn.
      const version = (before.session?.version ?? 0) + 1;
      expect(await snapshot(key, ["turn-1"])).toStrictEqual({
        ...before,
        session: { ...before.session, version },
      });
      expect((await claim("owner-2")).openTurnId).toBe("turn-1");
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: { status: "failed" },
          leaseOwner: "owner-1",
        }),
      ).toBe(false);
      await store.turns.releaseLease(key, "owner-1");
      expect(await transition("owner-3")).toEqual({ outcome: "busy" });
      // Releasing a session that does not exist is a no-op too.
      await store.turns.releaseLease(newSessionKey("session-404"), "owner-1");
      expect(await store.directory.getSession(newSessionKey("session-404"))).toBeUndefined();
    });

    it("round-trips turn rounds, pending calls, tool runs and stored results exactly", async () => {
      await claim("owner-1");
      const turn = await start("owner-1", "turn-1", {
        mode: "review",
        stream: true,
        startCursor: newCursor({
          responseId: "resp_prev",
          pendingInput: sampleTranscriptItems(),
          transcriptLength: 9,
        }),
      });
      expect(await store.turns.getTurn(key, "turn-1")).toStrictEqual(turn);

      clock.advance(1_000);
      const paused: TurnPatch = {
        status: "awaiting_client_tools",
        rounds: [{ ...newRound(key, "turn-1", "1"), result: newContinuationResult(key, "turn-1") }],
        pending: newPendingToolCalls(),
        toolExecutions: [
          {
            toolCallId: "call_s",
            name: "read_file",
            argumentsJson: '{"path":"a.ts"}',
            resultJson: '{"content":"x"}',
            // Read back as the Date it was written, to the millisecond.
            startedAt: new Date(clock.now().getTime() - 3),
            executionMs: 3,
          },
          {
            toolCallId: "call_t",
            name: "search",
            argumentsJson: "{}",
            errorMessage: "index unavailable",
            executionMs: 0,
          },
        ],
        usage: {
          inputTokens: 100,
          outputTokens: 20,
          totalTokens: 120,
          cachedInputTokens: 64,
          reasoningTokens: 8,
          llmCalls: 1,
        },
        llmCallCount: 1,
      };
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: paused,
          leaseOwner: "owner-1",
        }),
      ).toBe(true);
      const afterPause = { ...turn, ...paused, updatedAt: clock.now() };
      expect(await store.turns.getTurn(key, "turn-1")).toStrictEqual(afterPause);

      clock.advance(1_000);
      const failure = newFailureResult();
      const failed: TurnPatch = {
        status: "failed",
        rounds: [
          ...(paused.rounds ?? []),
          { ...newRound(key, "turn-1", "2"), result: failure },
          newRound(key, "turn-1", "3"),
        ],
        pending: null,
        error: failure.errors[0],
        files: [newFileRef("file_9")],
        llmCallCount: 3,
        completedAt: clock.now(),
      };
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: failed,
          leaseOwner: "owner-1",
        }),
      ).toBe(true);
      const afterFailure = { ...afterPause, ...failed, updatedAt: clock.now() };
      const stored = await store.turns.getTurn(key, "turn-1");
      expect(stored).toStrictEqual(afterFailure);
      expect(stored?.createdAt).toBeInstanceOf(Date);
      expect(stored?.updatedAt).toBeInstanceOf(Date);
      expect(stored?.completedAt).toBeInstanceOf(Date);
      expect(await store.directory.listTurns(key)).toStrictEqual([afterFailure]);

      const final = newFinalResult(key, "turn-2");
      const second = await start("owner-1", "turn-2", { sequence: 1 });
      const completed: TurnPatch = {
        status: "completed",
        rounds: [{ ...newRound(key, "turn-1", "4"), result: final }],
        files: [newFileRef("file_1"), newFileRef("file_2")],
        completedAt: clock.now(),
      };
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-2",
          turnPatch: completed,
          leaseOwner: "owner-1",
        }),
      ).toBe(true);
      expect(await store.turns.getTurn(key, "turn-2")).toStrictEqual({
        ...second,
        ...completed,
        updatedAt: clock.now(),
      });
    });

    it("recordLlmCall writes transcript items in order and the cursor; a later write overwrites the tail", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-1");
      const items = sampleTranscriptItems();
      const firstCursor = newCursor({ responseId: "resp_0", transcriptLength: 5 });
      expect(
        await store.turns.recordLlmCall({
          call: newCallRecord(key, "turn-1", 0),
          progress: progress(items.slice(0, 5), 0, firstCursor),
          lease: leaseFor("owner-1"),
        }),
      ).toBe(true);
      expect(await store.transcripts.loadTranscript(key, 5)).toStrictEqual(items.slice(0, 5));
      expect((await store.directory.getSession(key))?.cursor).toStrictEqual(firstCursor);

      const rewritten: TranscriptItem[] = [
        { type: "user_message", content: [{ type: "text", text: "instead" }] },
        { type: "assistant_message", text: "rewritten" },
      ];
      const secondCursor = newCursor({
        responseId: "resp_1",
        pendingInput: [{ type: "function_call_output", callId: "call_9", output: "{}", isError: false }],
        transcriptLength: 4,
      });
      expect(
        await store.turns.recordLlmCall({
          call: newCallRecord(key, "turn-1", 1),
          progress: progress(rewritten, 2, secondCursor),
          lease: leaseFor("owner-1"),
        }),
      ).toBe(true);
      expect(await store.transcripts.loadTranscript(key, 100)).toStrictEqual([
        ...items.slice(0, 2),
        ...rewritten,
      ]);
      expect((await store.directory.getSession(key))?.cursor).toStrictEqual(secondCursor);

      // A call without progress (e.g. a failed one) keeps its trace only.
      expect(
        await store.turns.recordLlmCall({
          call: newFailedCallRecord(key, "turn-1", 2),
          lease: leaseFor("owner-1"),
        }),
      ).toBe(true);
      expect(await store.transcripts.loadTranscript(key, 100)).toStrictEqual([
        ...items.slice(0, 2),
        ...rewritten,
      ]);
      expect((await store.directory.getSession(key))?.cursor).toStrictEqual(secondCursor);
      expect((await store.transcripts.listLlmCalls(key, "turn-1")).map((call) => call.index)).toEqual([
        0, 1, 2,
      ]);
    });

    it("a lease-guarded transition writes the given LLM calls with the turn in one step; a refused one writes none", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-1");
      const items = sampleTranscriptItems().slice(0, 3);
      const callCursor = newCursor({ responseId: "resp_1", transcriptLength: 3 });
      const llmCalls = [
        { call: newFailedCallRecord(key, "turn-1", 0) },
        { call: newCallRecord(key, "turn-1", 1), progress: progress(items, 0, callCursor) },
      ];

      const before = await snapshot(key, ["turn-1"]);
      const refused = { key, turnId: "turn-1", turnPatch: { status: "completed" as const }, llmCalls };
      expect(await writeTurnWhileLeaseHeld(store, clock.now(), { ...refused, leaseOwner: "owner-2" })).toBe(
        false,
      );
      expect(await snapshot(key, ["turn-1"])).toStrictEqual(before);

      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-1",
          turnPatch: { status: "completed", llmCallCount: 2 },
          sessionPatch: { openTurnId: null },
          leaseOwner: "owner-1",
          releaseLease: true,
          llmCalls,
        }),
      ).toBe(true);
      expect(await store.transcripts.listLlmCalls(key, "turn-1")).toStrictEqual(
        llmCalls.map((write) => write.call),
      );
      expect(await store.transcripts.loadTranscript(key, 10)).toStrictEqual(items);
      expect(await store.directory.getSession(key)).toMatchObject({ cursor: callCursor, openTurnId: null });
      expect(await store.turns.getTurn(key, "turn-1")).toMatchObject({
        status: "completed",
        llmCallCount: 2,
      });
      expect((await transition("owner-2")).outcome).toBe("applied");

      // The session patch's cursor wins over a call's: a failed turn restores the one it started from.
      await start("owner-2", "turn-2", { sequence: 2 });
      const restored = newCursor({ responseId: "resp_0" });
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "turn-2",
          turnPatch: { status: "failed" },
          sessionPatch: { cursor: restored, openTurnId: null },
          leaseOwner: "owner-2",
          llmCalls: [{ call: newCallRecord(key, "turn-2", 0), progress: progress(items, 3, callCursor) }],
        }),
      ).toBe(true);
      expect((await store.directory.getSession(key))?.cursor).toStrictEqual(restored);
      expect(await store.transcripts.listLlmCalls(key, "turn-2")).toHaveLength(1);
    });

    it("recordLlmCall renews the lease for its durationMs from the store's now", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-1");
      clock.advance(LEASE_MS - 1);
      expect(
        await store.turns.recordLlmCall({
          call: newCallRecord(key, "turn-1", 0),
          lease: leaseFor("owner-1", 5 * LEASE_MS),
        }),
      ).toBe(true);
      clock.advance(5 * LEASE_MS - 1);
      expect(await transition("owner-2")).toEqual({ outcome: "busy" });
      clock.advance(1);
      expect((await transition("owner-2")).outcome).toBe("applied");
    });

    it("judges a lease by its own clock: the `now` a claim carries neither frees nor holds it", async () => {
      await claim("owner-1");
      const farFuture = new Date(clock.now().getTime() + 1_000 * LEASE_MS);
      expect(await transition("owner-2", {}, key, LEASE_MS, farFuture)).toEqual({
        outcome: "busy",
      });
      clock.advance(LEASE_MS);
      const longAgo = new Date(clock.now().getTime() - 1_000 * LEASE_MS);
      const taken = await transition("owner-3", {}, key, LEASE_MS, longAgo);
      expect(taken.outcome).toBe("applied");
      // The new lease lasts LEASE_MS from the store's now, not from the claim's `now`.
      clock.advance(LEASE_MS - 1);
      expect(await transition("owner-4")).toEqual({ outcome: "busy" });
      clock.advance(1);
      expect((await transition("owner-4")).outcome).toBe("applied");
    });

    it("changeMode sets the session's mode and lists the history in order with every field", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-1");
      const first = newModeHistoryEntry(key, "turn-1", "code", "plan", {
        reason: "The user asked for a plan first.",
        changedAt: clock.advance(1_000),
      });
      const second = newModeHistoryEntry(key, "turn-1", "plan", "review", {
        reason: "Plan done; reviewing.",
        changedBy: "principal-a",
        changedAt: clock.advance(1_000),
      });
      expect(await store.turns.changeMode(first, "owner-1")).toBe(true);
      expect((await store.directory.getSession(key))?.mode).toBe("plan");
      expect(await store.turns.changeMode(second, "owner-1")).toBe(true);
      expect((await store.directory.getSession(key))?.mode).toBe("review");
      const history = await store.directory.listModeHistory(key);
      expect(history).toStrictEqual([first, second]);
      expect(history[0]?.changedAt).toBeInstanceOf(Date);
      expect(await store.directory.listModeHistory(newSessionKey("session-2"))).toStrictEqual([]);
    });

    it("findExpiredLeases finds only expired leases held over a running open turn", async () => {
      const expiredOpen = newSessionKey("s-expired-open", "principal-a");
      const expiredOpenOther = newSessionKey("s-expired-open", "principal-b");
      const expiredIdle = newSessionKey("s-expired-idle", "principal-a");
      const liveOpen = newSessionKey("s-live-open", "principal-a");
      const releasedOpen = newSessionKey("s-released-open", "principal-a");

      await claim("owner-1", expiredOpen);
      await start("owner-1", "turn-1", {}, expiredOpen);
      await claim("owner-2", expiredOpenOther);
      await start("owner-2", "turn-1", {}, expiredOpenOther);
      await claim("owner-3", expiredIdle);
      await start("owner-4", "turn-1", {}, liveOpen, { openTurnId: "turn-1" }, 10 * LEASE_MS);
      const heldAwaiting = newSessionKey("s-held-awaiting", "principal-a");
      await claim("owner-6", heldAwaiting);
      await start("owner-6", "turn-1", { status: "awaiting_client_tools" }, heldAwaiting);
      await claim("owner-5", releasedOpen);
      await start("owner-5", "turn-1", {}, releasedOpen);
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key: releasedOpen,
          turnId: "turn-1",
          turnPatch: { status: "awaiting_client_tools", pending: newPendingToolCalls() },
          leaseOwner: "owner-5",
          releaseLease: true,
        }),
      ).toBe(true);

      expect(await store.turns.findExpiredLeases({ expiredForMs: 0, limit: 10 })).toStrictEqual([]);
      clock.advance(LEASE_MS); // expiresAt == now: expired.
      const byName = (a: SessionKey, b: SessionKey) =>
        `${a.principal}/${a.sessionId}`.localeCompare(`${b.principal}/${b.sessionId}`);
      const found = await store.turns.findExpiredLeases({ expiredForMs: 0, limit: 10 });
      expect([...found].sort(byName)).toStrictEqual([expiredOpen, expiredOpenOther]);

      const limited = await store.turns.findExpiredLeases({ expiredForMs: 0, limit: 1 });
      expect(limited).toHaveLength(1);
      expect([expiredOpen, expiredOpenOther]).toContainEqual(limited[0]);
    });

    it("findExpiredLeases finds only leases expired at least expiredForMs ago by the store's clock", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-1");
      clock.advance(LEASE_MS);
      expect(await store.turns.findExpiredLeases({ expiredForMs: 0, limit: 10 })).toStrictEqual([key]);
      expect(await store.turns.findExpiredLeases({ expiredForMs: 5_000, limit: 10 })).toStrictEqual([]);
      clock.advance(4_999);
      expect(await store.turns.findExpiredLeases({ expiredForMs: 5_000, limit: 10 })).toStrictEqual([]);
      clock.advance(1);
      expect(await store.turns.findExpiredLeases({ expiredForMs: 5_000, limit: 10 })).toStrictEqual([key]);
    });

    it("scopes sessions by principal: one sessionId under two principals names two sessions", async () => {
      const keyA = newSessionKey("shared", "principal-a");
      const keyB = newSessionKey("shared", "principal-b");
      await claim("owner-a", keyA);
      const resultB = await store.turns.write({
        guard: "create",
        key: keyB,
        lease: leaseFor("owner-b"),
        now: clock.now(),
        create: { conversationContextId: "conv-b", agentContextId: null, mode: "plan" },
      });
      expect(resultB.outcome).toBe("applied");

      await start("owner-a", "turn-1", {}, keyA);
      await start("owner-a", "turn-only-a", { sequence: 1 }, keyA);
      await start("owner-b", "turn-1", {}, keyB);
      expect(await store.turns.getTurn(keyB, "turn-only-a")).toBeUndefined();
      expect((await store.turns.getTurn(keyB, "turn-1"))?.principal).toBe("principal-b");
      expect((await store.directory.listTurns(keyB)).map((turn) => turn.turnId)).toEqual(["turn-1"]);
      expect((await store.directory.listTurns(keyA)).map((turn) => turn.turnId)).toEqual([
        "turn-1",
        "turn-only-a",
      ]);

      expect(await touchTurn("owner-a", keyB)).toBe(false);

      expect(
        await store.turns.recordLlmCall({
          call: newCallRecord(keyA, "turn-1", 0),
          progress: progress(
            sampleTranscriptItems(),
            0,
            newCursor({ responseId: "resp_a", transcriptLength: 7 }),
          ),
          lease: leaseFor("owner-a"),
        }),
      ).toBe(true);
      expect(
        await store.turns.changeMode(newModeHistoryEntry(keyA, "turn-1", "code", "review"), "owner-a"),
      ).toBe(true);

      const sessionB = await store.directory.getSession(keyB);
      expect(sessionB).toMatchObject({
        principal: "principal-b",
        conversationContextId: "conv-b",
        mode: "plan",
        turnCount: 1,
      });
      expect(sessionB?.cursor).toStrictEqual(newCursor());
      expect(await store.transcripts.loadTranscript(keyB, 100)).toStrictEqual([]);
      expect(await store.transcripts.listLlmCalls(keyB, "turn-1")).toStrictEqual([]);
      expect(await store.directory.listModeHistory(keyB)).toStrictEqual([]);
      expect((await store.directory.getSession(keyA))?.mode).toBe("review");
      expect(await store.directory.getSession(newSessionKey("shared", "principal-c"))).toBeUndefined();
    });

    it("hands out copies: changing a given or returned record does not change the store", async () => {
      const session = await claim("owner-1");
      session.cursor.pendingInput.push({ type: "assistant_message", text: "mutated" });
      session.createdAt.setTime(0);
      expect((await store.directory.getSession(key))?.cursor.pendingInput).toStrictEqual([]);
      expect((await store.directory.getSession(key))?.createdAt).toStrictEqual(clock.now());
      const fresh = structuredClone(await store.directory.getSession(key));
      const got = await store.directory.getSession(key);
      got?.cursor.pendingInput.push({ type: "assistant_message", text: "mutated" });
      got?.updatedAt.setTime(0);
      if (got !== undefined) got.mode = "mutated";
      expect(await store.directory.getSession(key)).toStrictEqual(fresh);

      const turn = await start("owner-1", "turn-1");
      const expected = structuredClone(turn);
      turn.rounds.push(newRound(key, "turn-1", "f"));
      turn.usage.inputTokens = 999;
      expect(await store.turns.getTurn(key, "turn-1")).toStrictEqual(expected);
      const returned = await store.turns.getTurn(key, "turn-1");
      returned?.rounds.splice(0);
      expect(await store.turns.getTurn(key, "turn-1")).toStrictEqual(expected);
      const [listed] = await store.directory.listTurns(key);
      listed?.createdAt.setTime(0);
      expect(await store.directory.listTurns(key)).toStrictEqual([expected]);

      const items = sampleTranscriptItems();
      expect(
        await store.turns.recordLlmCall({
          call: newCallRecord(key, "turn-1", 0),
          progress: progress(items, 0, newCursor({ transcriptLength: items.length })),
          lease: leaseFor("owner-1"),
        }),
      ).toBe(true);
      items.splice(0, 1, { type: "system_message", text: "mutated" });
      const loaded = await store.transcripts.loadTranscript(key, 100);
      loaded.pop();
      expect(await store.transcripts.loadTranscript(key, 100)).toStrictEqual(sampleTranscriptItems());
    });
  });
}
