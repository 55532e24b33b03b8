import { SESSION_TITLE_LENGTH } from "@aptix/contracts";
import type { SessionListing, SessionStores } from "@aptix/core";
import {
  type ManualClock,
  newCallRecord,
  newFinalResult,
  newLease,
  newModeHistoryEntry,
  newSessionKey,
  newStoredFile,
  newTurnRecord,
  sampleTranscriptItems,
  startTurnFor,
  writeTurnWhileLeaseHeld,
} from "@aptix/core/testing";
import { describe, expect, it } from "vitest";
import { LEASE_MS, type SessionStoresHarness, sessionSuite } from "./session-stores-harness.js";

const BYTES = new Uint8Array([1, 2, 3]);

/**
 * The behaviour every `SessionDirectory` shares: sessions and turns listed, a session deleted with everything of
 * it, idle sessions found and the provider responses a deletion leaves. Call it at the top level of a test file.
 */
export function describeSessionDirectoryContract(
  name: string,
  makeStore: () => Promise<SessionStoresHarness>,
): void {
  describe(`SessionDirectory contract: ${name}`, () => {
    let store: SessionStores;
    let clock: ManualClock;
    const { current, key, claim, start, settledTurn } = sessionSuite(makeStore, (ready) => {
      ({ store, clock } = ready);
    });

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

    it("keeps the sessions whose title holds a text, ignoring case, and pages through those alone", async () => {
      const instructions: [string, string | undefined][] = [
        ["s-deploy", "Deploy the BUILD to staging"],
        ["s-percent", "What is 50% of 10?"],
        // Past the title: "build" starts after its last character, and the space it ends on is trimmed.
        ["s-long", `${"x".repeat(SESSION_TITLE_LENGTH - 1)} build`],
        ["s-none", undefined],
        ["s-rebuild", "Rebuild the index"],
      ];
      for (const [id, instruction] of instructions) {
        await settledTurn(newSessionKey(id), "t1", instruction === undefined ? {} : { instruction });
        clock.advance(1_000);
      }
      await settledTurn(newSessionKey("s-other", "principal-b"), "t1", { instruction: "build it" });
      const titled = async (titleContains: string, page: { limit?: number; after?: SessionListing } = {}) => {
        const { limit = 10, after } = page;
        return store.directory.listSessions({
          principal: "principal-a",
          limit,
          titleContains,
          ...(after ? { after: { updatedAt: after.updatedAt, sessionId: after.sessionId } } : {}),
        });
      };
      const ids = (listed: SessionListing[]) => listed.map(({ sessionId }) => sessionId);
      expect(ids(await titled("build"))).toEqual(["s-rebuild", "s-deploy"]);
      expect(ids(await titled("BuIlD tO"))).toEqual(["s-deploy"]);
      // `%` and `_` are themselves, no pattern.
      expect(ids(await titled("50%"))).toEqual(["s-percent"]);
      expect(ids(await titled("%"))).toEqual(["s-percent"]);
      expect(ids(await titled("_"))).toEqual([]);
      expect(ids(await titled("x "))).toEqual([]);
      expect(ids(await titled("x".repeat(SESSION_TITLE_LENGTH - 1)))).toEqual(["s-long"]);
      const [first] = await titled("build", { limit: 1 });
      expect(first?.sessionId).toBe("s-rebuild");
      expect(ids(await titled("build", { limit: 1, ...(first ? { after: first } : {}) }))).toEqual([
        "s-deploy",
      ]);
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

    it("shares the files of a fork's copied turns: deleting the source, the fork or a fork of it leaves the others' files", async () => {
      const { files } = current();
      const source = newSessionKey("source", "principal-a");
      const sessionOf = (sessionId: string) => ({ principal: source.principal, sessionId });
      await settledTurn(source, "t1", { instruction: "make one" });
      await files.put(
        newStoredFile(source.principal, "file_t1", { producedBy: { sessionId: "source", turnId: "t1" } }),
        BYTES,
      );
      await settledTurn(source, "t2", { instruction: "make another" });
      await files.put(
        newStoredFile(source.principal, "file_t2", { producedBy: { sessionId: "source", turnId: "t2" } }),
        BYTES,
      );
      async function fork(from: string, to: string, beforeSequence: number) {
        const read = await store.directory.getSession(sessionOf(from));
        if (!read) throw new Error(`expected session ${from}`);
        const forked = await store.directory.forkSession({
          source: sessionOf(from),
          expectVersion: read.version,
          sessionId: to,
          beforeSequence,
          mode: read.mode,
          cursor: read.cursor,
          forkedFrom: { sessionId: from, turnId: null },
          now: clock.now(),
        });
        expect(forked).toBe("forked");
      }
      // As a deletion runs: the store, then a file store apart from it.
      async function deleteSession(sessionId: string) {
        const read = await store.directory.getSession(sessionOf(sessionId));
        const fileIds = ["file_t1", "file_t2"];
        const input = { key: sessionOf(sessionId), expectVersion: read?.version as number, fileIds };
        expect(await store.directory.deleteSession(input)).toBe("deleted");
        await files.deleteFiles?.(source.principal, fileIds);
      }
      const producer = async (fileId: string) => (await files.get(source.principal, fileId))?.file.producedBy;

      await fork("source", "whole", 3);
      await fork("source", "first", 2);
      await fork("whole", "again", 3);
      await deleteSession("source");
      // Each goes to a session holding its turn, with the content as put.
      expect(await producer("file_t1")).toMatchObject({ turnId: "t1" });
      expect(["whole", "first", "again"]).toContain((await producer("file_t1"))?.sessionId);
      expect(await producer("file_t2")).toMatchObject({ turnId: "t2" });
      expect(["whole", "again"]).toContain((await producer("file_t2"))?.sessionId);
      expect((await files.get(source.principal, "file_t2"))?.content).toStrictEqual(BYTES);

      await deleteSession("whole");
      expect(await producer("file_t2")).toEqual({ sessionId: "again", turnId: "t2" });
      expect(["first", "again"]).toContain((await producer("file_t1"))?.sessionId);
      await deleteSession("again");
      // No session holds t2 any more: "first" copied t1 only.
      expect(await files.get(source.principal, "file_t2")).toBeUndefined();
      expect(await producer("file_t1")).toEqual({ sessionId: "first", turnId: "t1" });
      await deleteSession("first");
      expect(await files.get(source.principal, "file_t1")).toBeUndefined();
    });

    it("keeps the source's files when its fork is deleted first", async () => {
      const { files } = current();
      const source = newSessionKey("source", "principal-a");
      await settledTurn(source, "t1", { instruction: "make one" });
      await files.put(
        newStoredFile(source.principal, "file_t1", { producedBy: { sessionId: "source", turnId: "t1" } }),
        BYTES,
      );
      const read = await store.directory.getSession(source);
      if (!read) throw new Error("expected the source");
      const forkKey = { ...source, sessionId: "fork" };
      const forkInput = {
        source,
        expectVersion: read.version,
        sessionId: forkKey.sessionId,
        beforeSequence: 2,
        mode: read.mode,
        cursor: read.cursor,
        forkedFrom: { sessionId: source.sessionId, turnId: null },
        now: clock.now(),
      };
      expect(await store.directory.forkSession(forkInput)).toBe("forked");
      const fileIds = ["file_t1"];
      expect(await store.directory.deleteSession({ key: forkKey, expectVersion: 1, fileIds })).toBe(
        "deleted",
      );
      await files.deleteFiles?.(source.principal, fileIds);
      expect((await files.get(source.principal, "file_t1"))?.file.producedBy).toEqual({
        sessionId: source.sessionId,
        turnId: "t1",
      });
      expect(await store.directory.deleteSession({ key: source, expectVersion: read.version, fileIds })).toBe(
        "deleted",
      );
      await files.deleteFiles?.(source.principal, fileIds);
      expect(await files.get(source.principal, "file_t1")).toBeUndefined();
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

    it("lists turns by sequence", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-a", { sequence: 1 });
      clock.advance(1_000);
      await start("owner-1", "turn-z", { sequence: 0 });
      clock.advance(1_000);
      await start("owner-1", "turn-m", { sequence: 2 });
      const turns = await store.directory.listTurns(key);
      expect(turns.map((turn) => [turn.sequence, turn.turnId])).toEqual([
        [0, "turn-z"],
        [1, "turn-a"],
        [2, "turn-m"],
      ]);
      expect((await store.directory.getSession(key))?.turnCount).toBe(3);
      expect(await store.directory.listTurns(newSessionKey("session-2"))).toStrictEqual([]);
    });
  });
}
