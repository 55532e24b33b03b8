import { sha256ContentHashService } from "@aptix/core";
import { decideTurnRequest, inMemorySessionStores, ManualClock, requestHash } from "@aptix/core/testing";
import { describe, expect, it } from "vitest";
import {
  arrangedState,
  describeTurnTransitionTable,
  possibleCases,
  REQUEST_KINDS,
  requestOf,
  TABLE_CATALOG,
  TURN_TRANSITION_TABLE,
} from "../src/turn-transition-table.js";

describe("the turn transition table", () => {
  it("lists every (session state × turn state × request kind) combination once", () => {
    const listed = TURN_TRANSITION_TABLE.flatMap((row) =>
      REQUEST_KINDS.map((kind) => `${row.session}/${row.turn}/${kind}`),
    );
    expect(new Set(listed).size).toBe(5 * 6 * 6);
    expect(listed).toHaveLength(5 * 6 * 6);
  });

  it.each(possibleCases())(
    "decideTurnRequest: session $row.session, turn $row.turn, request $kind → $expected.decide",
    async ({ row, kind, expected }) => {
      if (!TABLE_CATALOG.successful) throw new Error(TABLE_CATALOG.errors[0].message);
      const clock = new ManualClock();
      const store = inMemorySessionStores(clock);
      const key = { principal: "principal-t", sessionId: "s" };
      const state = await arrangedState(store, clock, key, row, kind);
      const request = requestOf(key, kind);
      const transition = decideTurnRequest({
        key,
        state,
        request,
        hash: requestHash(request, sha256ContentHashService),
        catalog: TABLE_CATALOG.result,
        now: clock.now(),
      });
      const decided =
        transition.type === "refuse" ? `refuse:${transition.failure.errors[0].code}` : transition.type;
      expect(decided).toBe(expected.decide);
    },
  );
});

describeTurnTransitionTable("in memory", async () => {
  const clock = new ManualClock();
  const store = inMemorySessionStores(clock);
  return { store, files: store.files, clock, close: async () => {} };
});
