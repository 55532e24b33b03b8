import type { LlmCallRecord, SessionStores } from "@aptix/core";
import {
  FIXTURE_TIME,
  type ManualClock,
  newCallRecord,
  newCursor,
  newFailedCallRecord,
  newLease,
  newSessionKey,
  sampleTranscriptItems,
  writeTurnWhileLeaseHeld,
} from "@aptix/core/testing";
import { describe, expect, it } from "vitest";
import { LEASE_MS, type SessionStoresHarness, sessionSuite } from "./session-stores-harness.js";

/**
 * The behaviour every `TranscriptStore` shares: the transcript, compactions and LLM call traces as read back
 * after the turn store wrote them, and the trace retention. Call it at the top level of a test file.
 */
export function describeTranscriptStoreContract(
  name: string,
  makeStore: () => Promise<SessionStoresHarness>,
): void {
  describe(`TranscriptStore contract: ${name}`, () => {
    let store: SessionStores;
    let clock: ManualClock;
    const { key, leaseFor, claim, start, progress, settledTurn } = sessionSuite(makeStore, (ready) => {
      ({ store, clock } = ready);
    });

    it("loadTranscript answers only the first `length` items", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-1");
      const items = sampleTranscriptItems();
      expect(
        await store.turns.recordLlmCall({
          call: newCallRecord(key, "turn-1", 0),
          progress: progress(items, 0, newCursor({ responseId: "resp_0", transcriptLength: items.length })),
          lease: leaseFor("owner-1"),
        }),
      ).toBe(true);
      expect(await store.transcripts.loadTranscript(key, 0)).toStrictEqual([]);
      expect(await store.transcripts.loadTranscript(key, 1)).toStrictEqual(items.slice(0, 1));
      expect(await store.transcripts.loadTranscript(key, 3)).toStrictEqual(items.slice(0, 3));
      expect(await store.transcripts.loadTranscript(key, items.length)).toStrictEqual(items);
      expect(await store.transcripts.loadTranscript(key, items.length + 10)).toStrictEqual(items);
      expect(await store.transcripts.loadTranscript(newSessionKey("session-404"), 10)).toStrictEqual([]);
    });

    it("loadTranscript answers the items from `from` on, for a replay after a compaction", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-1");
      const items = sampleTranscriptItems();
      await store.turns.recordLlmCall({
        call: newCallRecord(key, "turn-1", 0),
        progress: progress(items, 0, newCursor({ transcriptLength: items.length })),
        lease: leaseFor("owner-1"),
      });
      expect(await store.transcripts.loadTranscript(key, items.length, 2)).toStrictEqual(items.slice(2));
      expect(await store.transcripts.loadTranscript(key, 3, 1)).toStrictEqual(items.slice(1, 3));
      expect(await store.transcripts.loadTranscript(key, items.length, items.length)).toStrictEqual([]);
    });

    it("keeps a compaction with its call and the compacted chain in one write; one run again replaces it", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-1");
      const items = sampleTranscriptItems();
      await store.turns.recordLlmCall({
        call: newCallRecord(key, "turn-1", 0),
        progress: progress(items, 0, newCursor({ transcriptLength: items.length })),
        lease: leaseFor("owner-1"),
      });
      const compacted = [
        { type: "system_message" as const, text: "boot" },
        {
          type: "user_message" as const,
          content: [{ type: "text" as const, text: "[CONVERSATION SUMMARY]\nfacts" }],
        },
      ];
      const cursor = newCursor({ transcriptLength: items.length + 2, replayFrom: items.length });
      const compaction = {
        principal: key.principal,
        sessionId: key.sessionId,
        turnId: "turn-1",
        reason: "threshold" as const,
        summary: "facts",
        tokensBefore: 7_000,
        tokensAfter: 900,
        fromPosition: items.length,
        createdAt: new Date(FIXTURE_TIME),
      };
      const write = {
        call: newCallRecord(key, "turn-1", 1),
        progress: progress(compacted, items.length, cursor),
        compaction,
        lease: leaseFor("owner-1"),
      };
      // Refused without the lease: nothing of it is kept.
      expect(await store.turns.recordLlmCall({ ...write, lease: leaseFor("owner-x") })).toBe(false);
      expect(await store.transcripts.listCompactions(key)).toStrictEqual([]);
      expect(await store.turns.recordLlmCall(write)).toBe(true);
      expect(await store.transcripts.listCompactions(key)).toStrictEqual([compaction]);
      expect((await store.directory.getSession(key))?.cursor).toStrictEqual(cursor);
      expect(
        await store.transcripts.loadTranscript(key, cursor.transcriptLength, items.length),
      ).toStrictEqual(compacted);
      // The round run again compacts at the same position: the record is the new one.
      const again = { ...compaction, summary: "facts, again", tokensAfter: 950 };
      expect(await store.turns.recordLlmCall({ ...write, compaction: again })).toBe(true);
      expect(await store.transcripts.listCompactions(key)).toStrictEqual([again]);
      expect(await store.transcripts.listCompactions(newSessionKey("session-404"))).toStrictEqual([]);
    });

    it("gives a fork the compactions of the turns it copies, and none of the later ones", async () => {
      const items = sampleTranscriptItems();
      /** Turn `turnId` compacted at `fromPosition`, then completed with the lease given back. */
      async function compactedTurn(turnId: string, sequence: number, fromPosition: number) {
        const owner = `owner-${turnId}`;
        await start(owner, turnId, { sequence });
        const compaction = {
          ...key,
          turnId,
          reason: "threshold" as const,
          summary: `facts of ${turnId}`,
          tokensBefore: 7_000,
          tokensAfter: 900,
          fromPosition,
          createdAt: new Date(FIXTURE_TIME),
        };
        const length = fromPosition + items.length;
        const written = await store.turns.recordLlmCall({
          call: newCallRecord(key, turnId, 0),
          progress: progress(
            items,
            fromPosition,
            newCursor({ transcriptLength: length, replayFrom: fromPosition }),
          ),
          compaction,
          lease: leaseFor(owner),
        });
        expect(written).toBe(true);
        const settled = await writeTurnWhileLeaseHeld(store, clock.now(), {
          key,
          turnId,
          turnPatch: { status: "completed" },
          sessionPatch: { openTurnId: null },
          leaseOwner: owner,
          releaseLease: true,
        });
        expect(settled).toBe(true);
        return compaction;
      }
      const first = await compactedTurn("turn-1", 1, 0);
      const second = await compactedTurn("turn-2", 2, items.length);
      const source = await store.directory.getSession(key);
      if (!source) throw new Error("expected the session");
      const fork = async (sessionId: string, beforeSequence: number) => {
        const forked = await store.directory.forkSession({
          source: key,
          expectVersion: source.version,
          sessionId,
          beforeSequence,
          mode: source.mode,
          cursor: source.cursor,
          forkedFrom: { sessionId: key.sessionId, turnId: null },
          now: clock.now(),
        });
        expect(forked).toBe("forked");
        return store.transcripts.listCompactions({ ...key, sessionId });
      };
      expect(await fork("fork-before-2", 2)).toStrictEqual([{ ...first, sessionId: "fork-before-2" }]);
      expect(await fork("fork-whole", 3)).toStrictEqual([
        { ...first, sessionId: "fork-whole" },
        { ...second, sessionId: "fork-whole" },
      ]);
      expect(await store.transcripts.listCompactions(key)).toStrictEqual([first, second]);
    });

    it("round-trips every transcript item variant exactly, in the transcript and the cursor", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-1");
      const items = sampleTranscriptItems();
      expect(new Set(items.map((item) => item.type))).toEqual(
        new Set([
          "system_message",
          "user_message",
          "assistant_message",
          "function_call",
          "function_call_output",
          "reasoning",
        ]),
      );
      const cursor = newCursor({
        responseId: null,
        pendingInput: sampleTranscriptItems(),
        transcriptLength: items.length,
      });
      expect(
        await store.turns.recordLlmCall({
          call: newCallRecord(key, "turn-1", 0),
          progress: progress(items, 0, cursor),
          lease: leaseFor("owner-1"),
        }),
      ).toBe(true);
      expect(await store.transcripts.loadTranscript(key, items.length)).toStrictEqual(
        sampleTranscriptItems(),
      );
      expect((await store.directory.getSession(key))?.cursor).toStrictEqual(cursor);
    });

    it("lists one turn's LLM calls by index, with request, response and error intact", async () => {
      await claim("owner-1");
      await start("owner-1", "turn-1");
      await start("owner-1", "turn-2", { sequence: 1 });
      const failed = newFailedCallRecord(key, "turn-1", 1, {
        startedAt: clock.advance(1_000),
        durationMs: 30_000,
      });
      const first = newCallRecord(key, "turn-1", 0);
      const replay = newCallRecord(key, "turn-1", 2, {
        request: {
          ...(newCallRecord(key, "turn-1", 2).request as NonNullable<LlmCallRecord["request"]>),
          continuation: { type: "replay", itemCount: 7 },
        },
        startedAt: clock.advance(1_000),
      });
      const otherTurn = newCallRecord(key, "turn-2", 0);
      for (const call of [failed, first, otherTurn, replay]) {
        expect(await store.turns.recordLlmCall({ call, lease: leaseFor("owner-1") })).toBe(true);
      }
      const calls = await store.transcripts.listLlmCalls(key, "turn-1");
      expect(calls).toStrictEqual([first, failed, replay]);
      expect(calls[1]?.startedAt).toBeInstanceOf(Date);
      expect(await store.transcripts.listLlmCalls(key, "turn-2")).toStrictEqual([otherTurn]);
      expect(await store.transcripts.listLlmCalls(key, "turn-404")).toStrictEqual([]);
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
  });
}
