import type { SessionStores, UsageSum } from "@aptix/core";
import {
  FIXTURE_TIME,
  type ManualClock,
  newCallRecord,
  newFailedCallRecord,
  newLease,
  newSessionKey,
} from "@aptix/core/testing";
import { describe, expect, it } from "vitest";
import { LEASE_MS, type SessionStoresHarness, sessionSuite } from "./session-stores-harness.js";

const DAY_MS = 86_400_000;
const EVER = { from: new Date(0), to: new Date("2100-01-01T00:00:00.000Z") };

/** Usage sums in one order, whatever order the store answered them in. */
function sorted(sums: readonly UsageSum[]): UsageSum[] {
  return [...sums].sort((a, b) =>
    `${a.key}/${a.provider}/${a.model}`.localeCompare(`${b.key}/${b.provider}/${b.model}`),
  );
}

/**
 * The behaviour every `UsageStore` shares: usage is kept with each successful call (and outside a trace, by
 * `recordUsage`), summed by day, model or session over a principal's own calls between two times, and kept when
 * its session is deleted (docs/http-api.md). Call it at the top level of a test file.
 */
export function describeUsageStoreContract(
  name: string,
  makeStore: () => Promise<SessionStoresHarness>,
): void {
  describe(`UsageStore contract: ${name}`, () => {
    let store: SessionStores;
    let clock: ManualClock;
    const { turnWithCalls } = sessionSuite(makeStore, (ready) => {
      ({ store, clock } = ready);
    });

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
