import type { SessionKey, SessionStores, TurnRecord, UsageSum } from "@aptix/core";
import {
  FIXTURE_TIME,
  type ManualClock,
  newCallRecord,
  newFailedCallRecord,
  newFinalResult,
  newLease,
  newModeHistoryEntry,
  newSessionKey,
  newTurnRecord,
  sampleTranscriptItems,
  startTurnFor,
  writeTurnWhileLeaseHeld,
} from "@aptix/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionStoreHarness } from "./session-store-contract.js";

const LEASE_MS = 60_000;
const CREATE = { conversationContextId: "conv-1", agentContextId: null, mode: "code" } as const;
const DAY_MS = 86_400_000;
const EVER = { from: new Date(0), to: new Date("2100-01-01T00:00:00.000Z") };

/** Usage sums in one order, whatever order the store answered them in. */
function sorted(sums: readonly UsageSum[]): UsageSum[] {
  return [...sums].sort((a, b) =>
    `${a.key}/${a.provider}/${a.model}`.localeCompare(`${b.key}/${b.provider}/${b.model}`),
  );
}

/**
 * The session store's listings, usage and deletion (`listSessions`, `listTurnPage`, `sumUsage`, `deleteSession`),
 * which every `SessionStores` shares. Usage is kept with each successful call, summed by day, model or session over
 * a principal's own calls between two times, and kept when its session is deleted (docs/http-api.md). Call it at the top level of a test file; each check starts from an empty store.
 */
export function describeSessionDirectoryContract(
  name: string,
  makeStore: () => Promise<SessionStoreHarness>,
): void {
  describe(`SessionStores listings and deletion: ${name}`, () => {
    let harness: SessionStoreHarness | undefined;
    let store: SessionStores;
    let clock: ManualClock;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
      clock = harness.clock;
    });

    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    });

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
      const read = await store.directory.getSession(key);
      const turn = newTurnRecord(key, turnId, {
        sequence: (read?.turnCount ?? 0) + 1,
        createdAt: clock.now(),
        rounds: [
          { request: { sessionId: key.sessionId, turnId, ...request }, requestHash: `sha256:${turnId}` },
        ],
      });
      const owner = `owner-${turnId}`;
      const applied = await store.turns.write({
        key,
        lease: newLease(owner, LEASE_MS),
        now: clock.now(),
        ...(read
          ? { guard: "version", expectVersion: read.version }
          : { guard: "create", create: { ...CREATE } }),
        insertTurn: turn,
        sessionPatch: { openTurnId: turnId },
      });
      expect(applied.outcome).toBe("applied");
      const updated = await writeTurnWhileLeaseHeld(store, clock.now(), {
        key,
        turnId,
        turnPatch: { status, completedAt: clock.now() },
        sessionPatch: { openTurnId: null },
        leaseOwner: owner,
        releaseLease: true,
      });
      expect(updated).toBe(true);
    }

    it("lists a principal's sessions most recently active first, paged after the last one shown", async () => {
      const a = newSessionKey("s-a", "principal-a");
      const b = newSessionKey("s-b", "principal-a");
      const c = newSessionKey("s-c", "principal-a");
      const other = newSessionKey("s-a", "principal-b");
      await settledTurn(a, "t1", { instruction: "first of a", workspaceId: "ws-1" });
      clock.advance(1_000);
      await settledTurn(b, "t1", { instruction: "first of b" });
      clock.advance(1_000);
      await settledTurn(c, "t1", {}, "failed");
      clock.advance(1_000);
      await settledTurn(other, "t1", { instruction: "not yours" });
      clock.advance(1_000);
      await settledTurn(a, "t2", { instruction: "second of a", workspaceId: "ws-2" }, "failed");

      const all = await store.directory.listSessions({ principal: "principal-a", limit: 10 });
      expect(all.map(({ sessionId }) => sessionId)).toEqual(["s-a", "s-c", "s-b"]);
      const [first, third, second] = all;
      expect(first).toMatchObject({
        lastTurnStatus: "failed",
        firstInstruction: "first of a",
        workspaceId: "ws-2",
        turnCount: 2,
      });
      const stored = await store.directory.getSession(c);
      if (!stored) throw new Error("expected session s-c");
      // What the list shows, and nothing more (no cursor, no lease).
      expect(third).toStrictEqual({
        sessionId: "s-c",
        mode: stored.mode,
        turnCount: 1,
        createdAt: stored.createdAt,
        updatedAt: stored.updatedAt,
        lastTurnStatus: "failed",
      });
      expect(second).toMatchObject({ lastTurnStatus: "completed", firstInstruction: "first of b" });
      expect(second?.workspaceId).toBeUndefined();

      const page1 = await store.directory.listSessions({ principal: "principal-a", limit: 2 });
      expect(page1.map(({ sessionId }) => sessionId)).toEqual(["s-a", "s-c"]);
      const last = page1[1];
      if (!last) throw new Error("expected two sessions");
      const page2 = await store.directory.listSessions({
        principal: "principal-a",
        limit: 2,
        after: { updatedAt: last.updatedAt, sessionId: last.sessionId },
      });
      expect(page2.map(({ sessionId }) => sessionId)).toEqual(["s-b"]);

      const inWs2 = await store.directory.listSessions({
        principal: "principal-a",
        limit: 10,
        workspaceId: "ws-2",
      });
      expect(inWs2.map(({ sessionId }) => sessionId)).toEqual(["s-a"]);
      // The filter is the latest workspace a turn named, not any earlier one.
      expect(
        await store.directory.listSessions({ principal: "principal-a", limit: 10, workspaceId: "ws-1" }),
      ).toEqual([]);
      expect(await store.directory.listSessions({ principal: "principal-c", limit: 10 })).toEqual([]);
    });

    it("orders sessions active in the same millisecond by id, descending, and pages through them", async () => {
      for (const id of ["s-1", "s-3", "s-2"]) await settledTurn(newSessionKey(id), "t1", { instruction: id });
      const listed = await store.directory.listSessions({ principal: "principal-a", limit: 10 });
      expect(listed.map(({ sessionId }) => sessionId)).toEqual(["s-3", "s-2", "s-1"]);
      const [, middle] = listed;
      if (!middle) throw new Error("expected three sessions");
      const after = { updatedAt: middle.updatedAt, sessionId: middle.sessionId };
      const rest = await store.directory.listSessions({ principal: "principal-a", limit: 10, after });
      expect(rest.map(({ sessionId }) => sessionId)).toEqual(["s-1"]);
    });

    it("pages a session's turns by sequence, as messages read them", async () => {
      const key = newSessionKey();
      for (const turnId of ["t1", "t2", "t3"]) await settledTurn(key, turnId, { instruction: turnId });
      const ids = async (from: number, limit: number) =>
        (await store.directory.listMessageTurns(key, from, limit)).map((turn) => turn.turnId);
      expect(await ids(2, 5)).toEqual(["t2", "t3"]);
      expect(await ids(1, 2)).toEqual(["t1", "t2"]);
      expect(await ids(4, 2)).toEqual([]);
      expect(await store.directory.listMessageTurns(newSessionKey("other"), 1, 2)).toEqual([]);
      expect((await store.directory.listMessageTurns(key, 1, 1))[0]).toStrictEqual({
        turnId: "t1",
        status: "completed",
        error: null,
        createdAt: clock.now(),
        updatedAt: clock.now(),
        completedAt: clock.now(),
        instruction: "t1",
        toolCalls: [],
        toolOutcomes: [],
      });
    });

    it("reads a turn's tool calls from its LLM calls, their outcomes from the server's runs and the client's results, and its answer", async () => {
      const key = newSessionKey();
      const owner = "owner-tools";
      const turn = newTurnRecord(key, "t1", {
        sequence: 1,
        createdAt: clock.now(),
        rounds: [
          {
            request: {
              sessionId: key.sessionId,
              turnId: "t1",
              instruction: "Read both",
              inputArtifacts: [
                { relativePath: "big.txt", fileName: "big.txt", contents: "x".repeat(10_000), origin: "ide" },
              ],
            },
            requestHash: "sha256:1",
          },
        ],
      });
      await startTurnFor(store, turn, newLease(owner, LEASE_MS));
      const final = newFinalResult(key, "t1");
      expect(
        await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId: "t1",
          turnPatch: {
            status: "completed",
            completedAt: clock.now(),
            toolExecutions: [
              {
                toolCallId: "call_0",
                name: "read_file",
                argumentsJson: "{}",
                resultJson: '"a"',
                executionMs: 1,
              },
            ],
            rounds: [
              ...turn.rounds,
              {
                request: {
                  sessionId: key.sessionId,
                  turnId: "t1",
                  toolResults: [{ toolCallId: "call_1", executionMs: 2, errorMessage: "ENOENT" }],
                },
                requestHash: "sha256:2",
                result: final,
              },
            ],
          },
          sessionPatch: { openTurnId: null },
          leaseOwner: owner,
          releaseLease: true,
          llmCalls: [{ call: newCallRecord(key, "t1", 0) }, { call: newCallRecord(key, "t1", 1) }],
        }),
      ).toBe(true);
      const [read] = await store.directory.listMessageTurns(key, 1, 10);
      expect(read).toMatchObject({
        turnId: "t1",
        instruction: "Read both",
        toolCalls: [
          { callId: "call_0", name: "read_file", argumentsJson: '{"path":"a.ts"}' },
          { callId: "call_1", name: "read_file", argumentsJson: '{"path":"a.ts"}' },
        ],
        toolOutcomes: [
          { toolCallId: "call_0", resultJson: '"a"' },
          { toolCallId: "call_1", errorMessage: "ENOENT" },
        ],
        answer: final,
      });
      // The artifacts are not read for a page of messages.
      expect(JSON.stringify(read)).not.toContain("x".repeat(100));
    });

    it("deletes a session with its turns, transcript, traces and mode history, and nothing of another", async () => {
      const key = newSessionKey();
      const kept = newSessionKey("session-1", "principal-b");
      await settledTurn(key, "t1", { instruction: "hello" });
      await settledTurn(kept, "t1", { instruction: "hello" });
      const lease = newLease("owner-x", LEASE_MS);
      const read = await store.directory.getSession(key);
      await store.turns.write({
        guard: "version",
        key,
        lease,
        now: clock.now(),
        expectVersion: read?.version as number,
      });
      const items = sampleTranscriptItems();
      await store.turns.recordLlmCall({
        call: newCallRecord(key, "t1", 0),
        progress: {
          items,
          fromPosition: 0,
          cursor: { responseId: null, pendingInput: [], transcriptLength: items.length },
        },
        lease,
      });
      await store.turns.changeMode(newModeHistoryEntry(key, "t1", "code", "plan"), "owner-x");
      await store.turns.releaseLease(key, "owner-x");
      const session = await store.directory.getSession(key);
      if (!session) throw new Error("expected the session");

      expect(
        await store.directory.deleteSession({ key, expectVersion: session.version + 1, fileIds: [] }),
      ).toBe("stale");
      expect(await store.directory.getSession(key)).toStrictEqual(session);
      expect(await store.directory.deleteSession({ key, expectVersion: session.version, fileIds: [] })).toBe(
        "deleted",
      );
      expect(await store.directory.getSession(key)).toBeUndefined();
      expect(await store.turns.getTurn(key, "t1")).toBeUndefined();
      expect(await store.directory.listTurns(key)).toEqual([]);
      expect(await store.transcripts.loadTranscript(key, 100)).toEqual([]);
      expect(await store.transcripts.listLlmCalls(key, "t1")).toEqual([]);
      expect(await store.directory.listModeHistory(key)).toEqual([]);
      expect(await store.directory.listSessions({ principal: key.principal, limit: 10 })).toEqual([]);
      expect(await store.directory.deleteSession({ key, expectVersion: session.version, fileIds: [] })).toBe(
        "stale",
      );
      expect((await store.directory.listTurns(kept)).map((turn) => turn.turnId)).toEqual(["t1"]);

      // The same id starts afresh.
      await settledTurn(key, "t1", { instruction: "again" });
      expect((await store.directory.getSession(key))?.turnCount).toBe(1);
    });

    it("keeps a deleted session's stored responses for deletion at their provider, each taken once until finished", async () => {
      const key = newSessionKey("stored");
      const other = newSessionKey("kept");
      for (const session of [key, other]) await settledTurn(session, "t1", { instruction: "hello" });
      for (const [session, turnId, index] of [
        [key, "t1", 0],
        [key, "t1", 1],
        [other, "t1", 0],
      ] as const) {
        const lease = newLease(`owner-${session.sessionId}-${index}`, LEASE_MS);
        const read = await store.directory.getSession(session);
        await store.turns.write({
          guard: "version",
          key: session,
          lease,
          now: clock.now(),
          expectVersion: read?.version as number,
        });
        const call = newCallRecord(session, turnId, index);
        const response = call.response && {
          ...call.response,
          responseId: `resp_${session.sessionId}_${index}`,
        };
        expect(await store.turns.recordLlmCall({ call: { ...call, response }, lease })).toBe(true);
        await store.turns.releaseLease(session, lease.owner);
      }
      const session = await store.directory.getSession(key);
      if (!session) throw new Error("expected the session");
      expect(
        await store.directory.deleteSession({
          key,
          expectVersion: session.version,
          fileIds: [],
          responsesStoredBy: "openai",
        }),
      ).toBe("deleted");

      const now = clock.now();
      const later = new Date(now.getTime() + 60_000);
      const taken = await store.directory.takeResponseDeletions({ limit: 10, dueBy: now, retryAt: later });
      expect(taken.sort((a, b) => a.responseId.localeCompare(b.responseId))).toEqual([
        { provider: "openai", responseId: "resp_stored_0", attempts: 0 },
        { provider: "openai", responseId: "resp_stored_1", attempts: 0 },
      ]);
      // Taken, they are not due again before `retryAt`.
      expect(await store.directory.takeResponseDeletions({ limit: 10, dueBy: now, retryAt: later })).toEqual(
        [],
      );
      await store.directory.finishResponseDeletions({
        done: [{ provider: "openai", responseId: "resp_stored_0" }],
        failed: [
          { provider: "openai", responseId: "resp_stored_1", retryAt: new Date(now.getTime() + 5_000) },
        ],
      });
      expect(
        await store.directory.takeResponseDeletions({
          limit: 10,
          dueBy: new Date(now.getTime() + 4_999),
          retryAt: later,
        }),
      ).toEqual([]);
      expect(
        await store.directory.takeResponseDeletions({
          limit: 10,
          dueBy: new Date(now.getTime() + 5_000),
          retryAt: later,
        }),
      ).toEqual([{ provider: "openai", responseId: "resp_stored_1", attempts: 1 }]);
      // A session deleted without a provider that stores its responses leaves none to delete.
      const kept = await store.directory.getSession(other);
      expect(
        await store.directory.deleteSession({
          key: other,
          expectVersion: kept?.version as number,
          fileIds: [],
        }),
      ).toBe("deleted");
      await store.directory.finishResponseDeletions({
        done: [{ provider: "openai", responseId: "resp_stored_1" }],
        failed: [],
      });
      expect(
        await store.directory.takeResponseDeletions({ limit: 10, dueBy: later, retryAt: later }),
      ).toEqual([]);
    });

    it("finds sessions idle since before a time, of every principal", async () => {
      await settledTurn(newSessionKey("old", "principal-a"), "t1", { instruction: "old" });
      await settledTurn(newSessionKey("old", "principal-b"), "t1", { instruction: "old" });
      clock.advance(10_000);
      const cutoff = clock.now();
      await settledTurn(newSessionKey("new", "principal-a"), "t1", { instruction: "new" });
      const found = await store.directory.findIdleSessions({ idleBefore: cutoff, limit: 10 });
      expect(found.map((key) => `${key.principal}/${key.sessionId}`).sort()).toEqual([
        "principal-a/old",
        "principal-b/old",
      ]);
      expect(await store.directory.findIdleSessions({ idleBefore: cutoff, limit: 1 })).toHaveLength(1);
      expect(
        await store.directory.findIdleSessions({
          idleBefore: new Date(cutoff.getTime() - 20_000),
          limit: 10,
        }),
      ).toEqual([]);
    });

    it("prunes the requests and raw payloads of calls started before a time, keeping response and timings", async () => {
      const key = newSessionKey();
      await settledTurn(key, "t1", { instruction: "hello" });
      const read = await store.directory.getSession(key);
      const lease = newLease("owner-x", LEASE_MS);
      await store.turns.write({
        guard: "version",
        key,
        lease,
        now: clock.now(),
        expectVersion: read?.version as number,
      });
      const old = { ...newCallRecord(key, "t1", 0), startedAt: clock.now() };
      clock.advance(60_000);
      const recent = { ...newCallRecord(key, "t1", 1), startedAt: clock.now() };
      expect(await store.turns.recordLlmCall({ call: old, lease })).toBe(true);
      expect(await store.turns.recordLlmCall({ call: recent, lease })).toBe(true);

      expect(
        await store.transcripts.pruneTraces({
          startedBefore: new Date(clock.now().getTime() - 1_000),
          limit: 10,
        }),
      ).toBe(1);
      const [pruned, kept] = await store.transcripts.listLlmCalls(key, "t1");
      expect(pruned).toStrictEqual({ ...old, request: null, providerRequest: null, providerResponse: null });
      expect(kept).toStrictEqual(recent);
      // Pruned once: not counted again.
      expect(
        await store.transcripts.pruneTraces({
          startedBefore: new Date(clock.now().getTime() - 1_000),
          limit: 10,
        }),
      ).toBe(0);
      expect(
        await store.transcripts.pruneTraces({ startedBefore: new Date(clock.now().getTime() + 1), limit: 0 }),
      ).toBe(0);
    });

    it("refuses busy to delete a session whose lease is held, until it expires", async () => {
      const key = newSessionKey();
      await settledTurn(key, "t1", { instruction: "hello" });
      const read = await store.directory.getSession(key);
      await store.turns.write({
        guard: "version",
        key,
        lease: newLease("owner-x", LEASE_MS),
        now: clock.now(),
        expectVersion: read?.version as number,
      });
      const held = await store.directory.getSession(key);
      if (!held) throw new Error("expected the session");
      expect(await store.directory.deleteSession({ key, expectVersion: held.version, fileIds: [] })).toBe(
        "busy",
      );
      expect(await store.directory.getSession(key)).toStrictEqual(held);
      clock.advance(LEASE_MS);
      expect(await store.directory.deleteSession({ key, expectVersion: held.version, fileIds: [] })).toBe(
        "deleted",
      );
    });

    /** Starts turn `turnId` of `key` and keeps `calls` of it, the first alone and the rest with its settlement. */
    async function turnWithCalls(
      key: SessionKey,
      turnId: string,
      calls: ReturnType<typeof newCallRecord>[],
    ): Promise<void> {
      const read = await store.directory.getSession(key);
      const lease = newLease(`owner-${turnId}`, LEASE_MS);
      await startTurnFor(
        store,
        newTurnRecord(key, turnId, { sequence: (read?.turnCount ?? 0) + 1, createdAt: clock.now() }),
        lease,
      );
      const [first, ...rest] = calls;
      if (first !== undefined) expect(await store.turns.recordLlmCall({ call: first, lease })).toBe(true);
      const settled = await writeTurnWhileLeaseHeld(store, clock.now(), {
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

    it("sums a principal's successful calls by model, day and session, with their provider and model", async () => {
      const key = newSessionKey("s-1", "principal-a");
      const other = newSessionKey("s-2", "principal-a");
      const day2 = new Date(FIXTURE_TIME.getTime() + DAY_MS);
      const claude = newCallRecord(key, "t1", 1, { provider: "anthropic" });
      if (claude.request) claude.request.model = "claude-test";
      await turnWithCalls(key, "t1", [
        newCallRecord(key, "t1", 0),
        claude,
        // A failed call reported no usage: it counts for nothing.
        newFailedCallRecord(key, "t1", 2),
      ]);
      await turnWithCalls(other, "t1", [newCallRecord(other, "t1", 0, { startedAt: day2 })]);

      const byModel = await store.usage.sumUsage({ principal: "principal-a", ...EVER, groupBy: "model" });
      expect(sorted(byModel)).toEqual([
        {
          key: "claude-test",
          provider: "anthropic",
          model: "claude-test",
          inputTokens: 120,
          cachedInputTokens: 100,
          outputTokens: 30,
          reasoningTokens: 12,
          llmCalls: 1,
        },
        {
          key: "gpt-test",
          provider: "openai",
          model: "gpt-test",
          inputTokens: 240,
          cachedInputTokens: 200,
          outputTokens: 60,
          reasoningTokens: 24,
          llmCalls: 2,
        },
      ]);
      const byDay = await store.usage.sumUsage({ principal: "principal-a", ...EVER, groupBy: "day" });
      expect(sorted(byDay).map(({ key: day, model, llmCalls }) => [day, model, llmCalls])).toEqual([
        [FIXTURE_TIME.toISOString().slice(0, 10), "claude-test", 1],
        [FIXTURE_TIME.toISOString().slice(0, 10), "gpt-test", 1],
        [day2.toISOString().slice(0, 10), "gpt-test", 1],
      ]);
      const bySession = await store.usage.sumUsage({ principal: "principal-a", ...EVER, groupBy: "session" });
      expect(
        sorted(bySession).map(({ key: session, model, llmCalls }) => [session, model, llmCalls]),
      ).toEqual([
        ["s-1", "claude-test", 1],
        ["s-1", "gpt-test", 1],
        ["s-2", "gpt-test", 1],
      ]);
      const oneSession = await store.usage.sumSessionUsage({ ...other, since: FIXTURE_TIME });
      expect(oneSession.map(({ key: model, llmCalls }) => [model, llmCalls])).toEqual([["gpt-test", 1]]);
      expect(await store.usage.sumSessionUsage({ ...other, since: new Date(day2.getTime() + 1) })).toEqual(
        [],
      );
    });

    it("counts the calls of whole UTC days from `from` and before `to`, and only the principal's own", async () => {
      const key = newSessionKey("s-1", "principal-a");
      const theirs = newSessionKey("s-1", "principal-b");
      const day1 = new Date(Date.UTC(2026, 2, 1));
      const day2 = new Date(day1.getTime() + DAY_MS);
      await turnWithCalls(key, "t1", [
        newCallRecord(key, "t1", 0, { startedAt: new Date(day1.getTime() + DAY_MS - 1) }),
        newCallRecord(key, "t1", 1, { startedAt: day2 }),
      ]);
      await turnWithCalls(theirs, "t1", [newCallRecord(theirs, "t1", 0, { startedAt: day1 })]);

      const calls = async (from: Date, to: Date) =>
        (await store.usage.sumUsage({ principal: "principal-a", from, to, groupBy: "model" })).reduce(
          (total, sum) => total + sum.llmCalls,
          0,
        );
      expect(await calls(day1, day2)).toBe(1);
      expect(await calls(day2, new Date(day2.getTime() + DAY_MS))).toBe(1);
      expect(await calls(EVER.from, day1)).toBe(0);
      expect(await calls(EVER.from, EVER.to)).toBe(2);
      expect(await store.usage.sumUsage({ principal: "principal-c", ...EVER, groupBy: "day" })).toEqual([]);
    });

    it("keeps each call's usage once under its id: kept again it changes nothing, and a deleted session's stays", async () => {
      const key = newSessionKey("s-1", "principal-a");
      const first = newCallRecord(key, "t1", 0);
      await turnWithCalls(key, "t1", [first]);
      const lease = newLease("owner-again", LEASE_MS);
      const read = await store.directory.getSession(key);
      await store.turns.write({
        guard: "version",
        key,
        lease,
        now: clock.now(),
        expectVersion: read?.version as number,
      });
      // The same call kept again (a write retried): its usage is not counted twice, nor changed.
      const again = {
        ...first,
        response: first.response && { ...first.response, usage: { inputTokens: 7, outputTokens: 3 } },
      };
      expect(await store.turns.recordLlmCall({ call: again, lease })).toBe(true);
      await store.turns.releaseLease(key, lease.owner);

      const expected = [
        {
          key: "s-1",
          provider: "openai",
          model: "gpt-test",
          inputTokens: 120,
          cachedInputTokens: 100,
          outputTokens: 30,
          reasoningTokens: 12,
          llmCalls: 1,
        },
      ];
      expect(await store.usage.sumUsage({ principal: "principal-a", ...EVER, groupBy: "session" })).toEqual(
        expected,
      );
      const session = await store.directory.getSession(key);
      expect(
        await store.directory.deleteSession({ key, expectVersion: session?.version as number, fileIds: [] }),
      ).toBe("deleted");
      expect(await store.usage.sumUsage({ principal: "principal-a", ...EVER, groupBy: "session" })).toEqual(
        expected,
      );
    });

    it("adds the calls of a session deleted and made again under the same ids; its view counts the new ones", async () => {
      const key = newSessionKey("s-1", "principal-a");
      const made: Date[] = [];
      for (let time = 0; time < 4; time++) {
        clock.advance(1_000);
        await turnWithCalls(key, "t1", [newCallRecord(key, "t1", 0, { startedAt: clock.now() })]);
        const session = await store.directory.getSession(key);
        made.push(session?.createdAt as Date);
        if (time < 3) {
          expect(
            await store.directory.deleteSession({
              key,
              expectVersion: session?.version as number,
              fileIds: [],
            }),
          ).toBe("deleted");
        }
      }
      const bySession = await store.usage.sumUsage({ principal: "principal-a", ...EVER, groupBy: "session" });
      expect(
        bySession.map(({ key: session, llmCalls, inputTokens }) => [session, llmCalls, inputTokens]),
      ).toEqual([["s-1", 4, 480]]);
      const sinceRemade = await store.usage.sumSessionUsage({ ...key, since: made[3] as Date });
      expect(sinceRemade.map(({ llmCalls }) => llmCalls)).toEqual([1]);
    });

    it('keeps usage outside a trace (embeddings) once per id, a call without a session under the key ""', async () => {
      const embedding = {
        principal: "principal-a",
        sessionId: null,
        turnId: null,
        index: null,
        provider: "openai",
        model: "text-embedding-test",
        inputTokens: 40,
        cachedInputTokens: 0,
        outputTokens: 0,
        reasoningTokens: 0,
        startedAt: FIXTURE_TIME,
      };
      await store.usage.recordUsage([
        { ...embedding, callId: "embedding-1" },
        { ...embedding, callId: "embedding-2", sessionId: "s-9", turnId: "t1", inputTokens: 2 },
      ]);
      await store.usage.recordUsage([{ ...embedding, callId: "embedding-1", inputTokens: 1_000 }]);
      await store.usage.recordUsage([]);
      const bySession = await store.usage.sumUsage({ principal: "principal-a", ...EVER, groupBy: "session" });
      expect(
        sorted(bySession).map(({ key, model, inputTokens, llmCalls }) => [key, model, inputTokens, llmCalls]),
      ).toEqual([
        ["", "text-embedding-test", 40, 1],
        ["s-9", "text-embedding-test", 2, 1],
      ]);
      const byModel = await store.usage.sumUsage({ principal: "principal-a", ...EVER, groupBy: "model" });
      expect(
        byModel.map(({ key, inputTokens, outputTokens, llmCalls }) => [
          key,
          inputTokens,
          outputTokens,
          llmCalls,
        ]),
      ).toEqual([["text-embedding-test", 42, 0, 2]]);
      const s9 = await store.usage.sumSessionUsage({
        principal: "principal-a",
        sessionId: "s-9",
        since: FIXTURE_TIME,
      });
      expect(s9.map(({ inputTokens }) => inputTokens)).toEqual([2]);
    });

    it("pages the session grouping in id order, the calls without a session first, every model of each session", async () => {
      const entry = {
        principal: "principal-a",
        turnId: "t1",
        index: 0,
        provider: "openai",
        inputTokens: 10,
        cachedInputTokens: 0,
        outputTokens: 1,
        reasoningTokens: 0,
        startedAt: FIXTURE_TIME,
      };
      await store.usage.recordUsage([
        { ...entry, callId: "c-1", sessionId: "s-b", model: "gpt-test" },
        { ...entry, callId: "c-2", sessionId: "s-b", model: "gpt-other" },
        { ...entry, callId: "c-3", sessionId: "s-a", model: "gpt-test" },
        { ...entry, callId: "c-4", sessionId: null, turnId: null, index: null, model: "gpt-test" },
        { ...entry, callId: "c-5", sessionId: "s-c", model: "gpt-test" },
        // Another principal's, and one outside the range: on no page.
        { ...entry, callId: "c-6", sessionId: "s-a0", model: "gpt-test", principal: "principal-b" },
        {
          ...entry,
          callId: "c-7",
          sessionId: "s-a1",
          model: "gpt-test",
          startedAt: new Date(FIXTURE_TIME.getTime() + DAY_MS),
        },
      ]);
      const range = {
        from: new Date(FIXTURE_TIME.toISOString().slice(0, 10)),
        to: new Date(Date.parse(FIXTURE_TIME.toISOString().slice(0, 10)) + DAY_MS),
      };
      const page = async (after: string | undefined, limit: number) =>
        sorted(
          await store.usage.sumUsage({
            principal: "principal-a",
            ...range,
            groupBy: "session",
            page: { limit, ...(after === undefined ? {} : { after }) },
          }),
        ).map(({ key, model }) => [key, model]);
      expect(await page(undefined, 2)).toEqual([
        ["", "gpt-test"],
        ["s-a", "gpt-test"],
      ]);
      expect(await page("s-a", 1)).toEqual([
        ["s-b", "gpt-other"],
        ["s-b", "gpt-test"],
      ]);
      expect(await page("s-b", 5)).toEqual([["s-c", "gpt-test"]]);
      expect(await page("s-c", 5)).toEqual([]);
      expect(await page("", 1)).toEqual([["s-a", "gpt-test"]]);
    });
  });
}
