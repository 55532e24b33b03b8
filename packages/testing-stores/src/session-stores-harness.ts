import type {
  ConversationCursor,
  FileStore,
  SessionKey,
  SessionPatch,
  SessionRecord,
  SessionStores,
  TranscriptItem,
  TurnRecord,
  TurnWrite,
  TurnWriteResult,
} from "@aptix/core";
import {
  type Lease,
  type ManualClock,
  type newCallRecord,
  newLease,
  newSessionKey,
  newTurnRecord,
  startTurnFor,
  writeTurnWhileLeaseHeld,
} from "@aptix/core/testing";
import { afterEach, beforeEach, expect } from "vitest";

export const LEASE_MS = 60_000;
export const CREATE = { conversationContextId: "conv-1", agentContextId: "agent-1", mode: "code" } as const;

/** What a contract run needs from the stores under test, made afresh (over empty data) for every test. */
export interface SessionStoresHarness {
  store: SessionStores;
  /** The file store sharing the stores' database: a fork holds the files of the turns it copies. */
  files: FileStore;
  /**
   * The stores' clock, the one they judge leases by (a SQL store's stand-in for its database's `now()`) and
   * stamp `updatedAt` with; the suites move it to let leases expire and take their `now` values from it.
   */
  clock: ManualClock;
  /** Releases whatever `makeStore` (and `newConnection`) opened. */
  close(): Promise<void>;
}

/**
 * Makes the stores afresh for each test of the enclosing `describe`, hands them to `ready`, and closes them
 * after; answers the current test's harness.
 */
function withSessionStores(
  makeStore: () => Promise<SessionStoresHarness>,
  ready: (harness: SessionStoresHarness) => void,
): () => SessionStoresHarness {
  let harness: SessionStoresHarness | undefined;
  beforeEach(async () => {
    harness = await makeStore();
    ready(harness);
  });
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });
  return () => {
    if (harness === undefined) throw new Error("The session stores are made for a test only.");
    return harness;
  };
}

/**
 * The opening every session-store suite shares: the stores made afresh for each test of the enclosing `describe`
 * and handed to `ready`, the session most tests use (`key`), and the writes that arrange it.
 */
export function sessionSuite(
  makeStore: () => Promise<SessionStoresHarness>,
  ready: (harness: SessionStoresHarness) => void,
) {
  const current = withSessionStores(makeStore, ready);
  const key = newSessionKey("session-1", "principal-a");
  return { current, key, ...sessionWrites(current, key) };
}

/**
 * The writes the suites arrange sessions with, on the stores of the test running now (`current`), of `key`
 * unless told another.
 */
function sessionWrites(current: () => SessionStoresHarness, key: SessionKey) {
  function leaseFor(owner: string, ms = LEASE_MS): Lease {
    return newLease(owner, ms);
  }

  /** An empty lease-guarded write of `k`'s turn-1 by `owner`: whether `owner` may write. */
  function touchTurn(owner: string, k: SessionKey = key): Promise<boolean> {
    return writeTurnWhileLeaseHeld(current().store, current().clock.now(), {
      key: k,
      turnId: "turn-1",
      turnPatch: {},
      leaseOwner: owner,
    });
  }

  /** A claim of `k`'s lease for `owner` with `writes`, decided from the session as read now. */
  async function transition(
    owner: string,
    writes: Pick<
      Extract<TurnWrite, { guard: "version" }>,
      "turnPatches" | "sessionPatch" | "insertTurn" | "modeChange" | "releaseLease" | "maxRunningTurns"
    > = {},
    k: SessionKey = key,
    ms = LEASE_MS,
    now = current().clock.now(),
  ): Promise<TurnWriteResult> {
    const read = await current().store.directory.getSession(k);
    return current().store.turns.write({
      key: k,
      lease: leaseFor(owner, ms),
      now,
      ...(read
        ? { guard: "version", expectVersion: read.version }
        : { guard: "create", create: { ...CREATE } }),
      ...writes,
    });
  }

  /** Claims `k` for `owner` (creating it if needed) and expects the claim to apply. */
  async function claim(owner: string, k: SessionKey = key, ms = LEASE_MS): Promise<SessionRecord> {
    const result = await transition(owner, {}, k, ms);
    if (result.outcome !== "applied") throw new Error(`expected applied, got ${result.outcome}`);
    return result.session;
  }

  /**
   * Starts a running turn that becomes the session's open turn, with a claim of `owner` (who gives back the
   * lease it holds first: a turn starts with a claim), and expects it to apply.
   */
  async function start(
    owner: string,
    turnId: string,
    overrides: Partial<TurnRecord> = {},
    k: SessionKey = key,
    sessionPatch: SessionPatch = { openTurnId: turnId },
    ms = LEASE_MS,
  ): Promise<TurnRecord> {
    const turn = newTurnRecord(k, turnId, { createdAt: current().clock.now(), ...overrides });
    await current().store.turns.releaseLease(k, owner);
    const result = await transition(owner, { insertTurn: turn, sessionPatch }, k, ms);
    expect(result.outcome).toBe("applied");
    return turn;
  }

  /** Everything the store holds about `k` (and the given turns' calls), for nothing-changed checks. */
  async function snapshot(k: SessionKey, turnIds: string[]) {
    return {
      session: await current().store.directory.getSession(k),
      turns: await current().store.directory.listTurns(k),
      transcript: await current().store.transcripts.loadTranscript(k, 1_000),
      modeHistory: await current().store.directory.listModeHistory(k),
      calls: await Promise.all(turnIds.map((turnId) => current().store.transcripts.listLlmCalls(k, turnId))),
    };
  }

  function progress(items: TranscriptItem[], fromPosition: number, cursor: ConversationCursor) {
    return { items, fromPosition, cursor };
  }

  /**
   * Starts turn `turnId` of `key` (creating the session) with `request` fields, and settles it as `status`
   * with the lease given back; the session's `updatedAt` becomes the clock's now.
   */
  async function settledTurn(
    key: SessionKey,
    turnId: string,
    request: { instruction?: string; workspaceId?: string },
    status: TurnRecord["status"] = "completed",
  ): Promise<void> {
    const read = await current().store.directory.getSession(key);
    const turn = newTurnRecord(key, turnId, {
      sequence: (read?.turnCount ?? 0) + 1,
      createdAt: current().clock.now(),
      rounds: [
        { request: { sessionId: key.sessionId, turnId, ...request }, requestHash: `sha256:${turnId}` },
      ],
    });
    const owner = `owner-${turnId}`;
    const applied = await current().store.turns.write({
      key,
      lease: newLease(owner, LEASE_MS),
      now: current().clock.now(),
      ...(read
        ? { guard: "version", expectVersion: read.version }
        : { guard: "create", create: { ...CREATE } }),
      insertTurn: turn,
      sessionPatch: { openTurnId: turnId },
    });
    expect(applied.outcome).toBe("applied");
    const updated = await writeTurnWhileLeaseHeld(current().store, current().clock.now(), {
      key,
      turnId,
      turnPatch: { status, completedAt: current().clock.now() },
      sessionPatch: { openTurnId: null },
      leaseOwner: owner,
      releaseLease: true,
    });
    expect(updated).toBe(true);
  }

  /** Starts turn `turnId` of `key` and keeps `calls` of it, the first alone and the rest with its settlement. */
  async function turnWithCalls(
    key: SessionKey,
    turnId: string,
    calls: ReturnType<typeof newCallRecord>[],
  ): Promise<void> {
    const read = await current().store.directory.getSession(key);
    const lease = newLease(`owner-${turnId}`, LEASE_MS);
    await startTurnFor(
      current().store,
      newTurnRecord(key, turnId, { sequence: (read?.turnCount ?? 0) + 1, createdAt: current().clock.now() }),
      lease,
    );
    const [first, ...rest] = calls;
    if (first !== undefined)
      expect(await current().store.turns.recordLlmCall({ call: first, lease })).toBe(true);
    const settled = await writeTurnWhileLeaseHeld(current().store, current().clock.now(), {
      key,
      turnId,
      turnPatch: { status: "completed" },
      sessionPatch: { openTurnId: null },
      leaseOwner: lease.owner,
      releaseLease: true,
      llmCalls: rest.map((call) => ({ call })),
    });
    expect(settled).toBe(true);
  }

  return { leaseFor, touchTurn, transition, claim, start, snapshot, progress, settledTurn, turnWithCalls };
}
