import { describe, expect, it } from "vitest";
import type { SessionKey, StoredDelta, TurnRecord } from "../../src/index.js";
import { FOLLOW_PAGE_DELTAS, SharedTurnReads } from "../../src/streaming/shared-turn-reads.js";

const key: SessionKey = { principal: "alice", sessionId: "s" };
const deltas: StoredDelta[] = [0, 1, 2, 3, 4].map((seq) => ({ round: 0, seq, delta: `d${seq}` }));
const turn = { turnId: "t", rounds: [{}] } as unknown as TurnRecord;

/** A store that counts its reads and answers the turn and its round 0's deltas. */
function countingStore() {
  const reads = { turns: 0, lists: [] as number[] };
  return {
    reads,
    persistence: {
      getTurn: async () => {
        reads.turns++;
        return turn;
      },
    },
    events: {
      list: async (_key: SessionKey, _turnId: string, _round: number, afterSeq: number) => {
        reads.lists.push(afterSeq);
        return deltas.filter((delta) => delta.seq > afterSeq);
      },
    },
  };
}

describe("SharedTurnReads", () => {
  it("reads a round once for the followers asking together, each getting the deltas after its own position", async () => {
    const store = countingStore();
    const reads = new SharedTurnReads(store.persistence, store.events);
    const answers = await Promise.all([3, -1, 1].map((afterSeq) => reads.read(key, "t", 0, afterSeq)));
    expect(store.reads).toEqual({ turns: 1, lists: [-1] });
    expect(answers.map((answer) => answer.deltas.map((delta) => delta.seq))).toEqual([
      [4],
      [0, 1, 2, 3, 4],
      [2, 3, 4],
    ]);
    expect(answers.every((answer) => answer.turn === turn)).toBe(true);
  });

  it("reads again for a follower that asks after the shared read started, and apart for another round", async () => {
    const store = countingStore();
    const reads = new SharedTurnReads(store.persistence, store.events);
    await reads.read(key, "t", 0, -1);
    const [again, otherRound] = await Promise.all([reads.read(key, "t", 0, 2), reads.read(key, "t", 1, -1)]);
    expect(store.reads).toEqual({ turns: 3, lists: [-1, 2] });
    expect(again.deltas.map((delta) => delta.seq)).toEqual([3, 4]);
    // Round 1 is past the turn's rounds: the turn alone, no deltas read.
    expect(otherRound.deltas).toEqual([]);
  });
});

describe("SharedTurnReads, a round longer than a page", () => {
  const long: StoredDelta[] = Array.from({ length: FOLLOW_PAGE_DELTAS + 3 }, (_, seq) => ({
    round: 0,
    seq,
    delta: `d${seq}`,
  }));
  const pagedEvents = (asked: number[]) => ({
    list: async (_key: SessionKey, _turnId: string, _round: number, afterSeq: number, limit?: number) => {
      asked.push(limit ?? -1);
      return long.filter((delta) => delta.seq > afterSeq).slice(0, limit);
    },
  });

  it("reads a page at a time, telling a full page from the last", async () => {
    const asked: number[] = [];
    const reads = new SharedTurnReads({ getTurn: async () => turn }, pagedEvents(asked));
    const first = await reads.read(key, "t", 0, -1);
    expect(first.deltas).toHaveLength(FOLLOW_PAGE_DELTAS);
    expect(first.more).toBe(true);
    const last = await reads.read(key, "t", 0, FOLLOW_PAGE_DELTAS - 1);
    expect(last.deltas.map((delta) => delta.seq)).toEqual([0, 1, 2].map((n) => FOLLOW_PAGE_DELTAS + n));
    expect(last.more).toBe(false);
    expect(asked).toEqual([FOLLOW_PAGE_DELTAS, FOLLOW_PAGE_DELTAS]);
  });

  it("tells a follower ahead of a shared page's start that more follows, though the page held none of its own", async () => {
    const reads = new SharedTurnReads({ getTurn: async () => turn }, pagedEvents([]));
    const [behind, ahead] = await Promise.all([
      reads.read(key, "t", 0, -1),
      reads.read(key, "t", 0, FOLLOW_PAGE_DELTAS),
    ]);
    expect(behind.deltas).toHaveLength(FOLLOW_PAGE_DELTAS);
    expect(ahead).toMatchObject({ deltas: [], more: true });
    // Read again on its own, it gets the rest of the round.
    const again = await reads.read(key, "t", 0, FOLLOW_PAGE_DELTAS);
    expect(again.deltas.map((delta) => delta.seq)).toEqual([1, 2].map((n) => FOLLOW_PAGE_DELTAS + n));
    expect(again.more).toBe(false);
  });
});
