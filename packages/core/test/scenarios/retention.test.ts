import { describe, expect, it } from "vitest";
import { createTestAgent, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

const DAY_MS = 24 * 3_600_000;

describe("retention: idle sessions and old trace payloads, by the service's clock", () => {
  it("deletes sessions idle past sessionRetentionMs as DELETE does, and keeps the others", async () => {
    const agent = await createTestAgent({ sessionRetentionMs: 2 * DAY_MS });
    agent.provider.enqueue({ text: "Old." }, { text: "New." });
    responseOf(await agent.execute({ sessionId: "old", turnId: "t1", instruction: "Old" }));
    agent.clock.advance(DAY_MS);
    responseOf(await agent.execute({ sessionId: "new", turnId: "t1", instruction: "New" }));

    agent.clock.advance(DAY_MS);
    expect(await agent.service.sweepIdleSessions()).toBe(0);
    agent.clock.advance(1);
    expect(await agent.service.sweepIdleSessions()).toBe(1);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "new")).turns).toHaveLength(1);
    const gone = await agent.service.getSession(PRINCIPAL, "old");
    expect(gone.successful ? undefined : gone.errors[0].code).toBe("SESSION_NOT_FOUND");
    expect(await agent.service.sweepIdleSessions()).toBe(0);
  });

  it("keeps every session without sessionRetentionMs", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Kept." });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Keep" }));
    agent.clock.advance(10_000 * DAY_MS);
    expect(await agent.service.sweepIdleSessions()).toBe(0);
    expect(resultOf(await agent.service.getSession(PRINCIPAL, "s")).turns).toHaveLength(1);
  });

  it("drops the composed requests and raw payloads of traces past traceRetentionMs, keeping timings and usage", async () => {
    const agent = await createTestAgent({ traceRetentionMs: DAY_MS });
    agent.provider.enqueue({ text: "Traced.", usage: { inputTokens: 10, outputTokens: 2 } });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Trace" }));
    const [before] = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1")).llmCalls;
    expect(before?.request).not.toBeNull();

    agent.clock.advance(DAY_MS - 1);
    expect(await agent.service.pruneTraces()).toBe(0);
    agent.clock.advance(2);
    expect(await agent.service.pruneTraces()).toBe(1);
    const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, "s", "t1"));
    expect(trace.llmCalls).toEqual([
      { ...before, request: null, providerRequest: null, providerResponse: null },
    ]);
    expect(trace.usage).toMatchObject({ inputTokens: 10, outputTokens: 2 });
  });
});

describe("a deleted session's responses stored at its provider (docs/security.md, delete means gone)", () => {
  it("deletes them there at the next run, retrying a failed one after a growing wait, and no other session's", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "One." }, { text: "Two." }, { text: "Kept." });
    responseOf(await agent.execute({ sessionId: "gone", turnId: "t1", instruction: "One" }));
    responseOf(await agent.execute({ sessionId: "gone", turnId: "t2", instruction: "Two" }));
    responseOf(await agent.execute({ sessionId: "kept", turnId: "t1", instruction: "Kept" }));
    expect(agent.provider.storedResponseIds()).toEqual(["resp_1", "resp_2", "resp_3"]);
    // Nothing to delete while the session lives.
    expect(await agent.service.deleteStoredResponses()).toEqual({ deleted: 0, failed: [], abandoned: 0 });

    expect(resultOf(await agent.service.deleteSession(PRINCIPAL, "gone"))).toEqual({ deleted: true });
    agent.provider.failNextDeletions(1);
    const first = await agent.service.deleteStoredResponses();
    expect(first).toEqual({
      deleted: 1,
      failed: [{ provider: "scripted", attempts: 1, reason: "HTTP 503 (scripted)" }],
      abandoned: 0,
    });
    expect(agent.provider.storedResponseIds()).toHaveLength(2);
    // Not again before its wait (a minute after the first failure).
    expect(await agent.service.deleteStoredResponses()).toEqual({ deleted: 0, failed: [], abandoned: 0 });
    agent.clock.advance(60_000);
    expect(await agent.service.deleteStoredResponses()).toEqual({ deleted: 1, failed: [], abandoned: 0 });
    expect(agent.provider.storedResponseIds()).toEqual(["resp_3"]);
  });
});
