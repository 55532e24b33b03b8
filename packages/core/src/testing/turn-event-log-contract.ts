import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TurnEventLog } from "../ports/turn-event-log.js";

export interface TurnEventLogHarness {
  log: TurnEventLog;
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
    const alice = { principal: "alice", sessionId: "s" };

    beforeEach(async () => {
      harness = await makeLog();
      log = harness.log;
    });

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
  });
}
