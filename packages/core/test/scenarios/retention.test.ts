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
