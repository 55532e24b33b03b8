import { describe, expect, it } from "vitest";
import { DEFAULT_EVENT_RETENTION_MS } from "../../src/entry/agent-service.js";
import { collect, createTestAgent, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

/** Execute options of a streamed request whose live events nobody reads: they still reach the event log. */
const streamed = { onEvent: () => {} };

describe("stream events are kept for eventRetentionMs after their turn ends", () => {
  it("prunes a finished turn's events once the retention has passed; a resume then ends with the stored result", async () => {
    const agent = await createTestAgent({ eventFlushMs: 1 });
    agent.provider.enqueue(
      { text: "one two", toolCalls: [{ name: "read_file", arguments: { path: "a" }, callId: "c1" }] },
      { text: "three four" },
      { text: "five six", toolCalls: [{ name: "read_file", arguments: { path: "b" }, callId: "c2" }] },
    );
    const first = await agent.service.execute(
      { sessionId: "s", turnId: "done", instruction: "Count", stream: true },
      PRINCIPAL,
      streamed,
    );
    responseOf(first);
    const finished = await agent.service.execute(
      {
        sessionId: "s",
        turnId: "done",
        toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: "{}" }],
      },
      PRINCIPAL,
      streamed,
    );
    responseOf(finished);
    // A turn awaiting client tools has not ended: its events stay whatever their age.
    responseOf(
      await agent.service.execute(
        { sessionId: "s", turnId: "open", instruction: "More", stream: true },
        PRINCIPAL,
        streamed,
      ),
    );
    const all = await collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "done")));
    expect(all.map((event) => event.id)).toEqual(["0-0", "0-1", "0-result", "1-0", "1-1", "1-result"]);

    agent.clock.advance(DEFAULT_EVENT_RETENTION_MS);
    expect(await agent.service.pruneTurnEvents()).toBe(0);
    expect(await collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "done")))).toEqual(all);

    agent.clock.advance(1);
    expect(await agent.service.pruneTurnEvents()).toBe(1);
    expect(await agent.service.pruneTurnEvents()).toBe(0);
    // Resumed from anywhere, the turn still ends with its stored result, and its deltas are gone.
    const results = [
      { id: "0-result", event: "result", data: first },
      { id: "1-result", event: "result", data: finished },
    ];
    expect(await collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "done")))).toEqual(results);
    expect(await collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "done", "1-0")))).toEqual([
      results[1],
    ]);
    const open = await collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "open")));
    expect(open.map((event) => event.id)).toEqual(["0-0", "0-1", "0-result"]);
  });

  it("keeps events for the eventRetentionMs the service is given", async () => {
    const agent = await createTestAgent({ eventFlushMs: 1, eventRetentionMs: 60_000 });
    agent.provider.enqueue({ text: "short lived" });
    responseOf(
      await agent.service.execute(
        { sessionId: "s", turnId: "t", instruction: "Hi", stream: true },
        PRINCIPAL,
        streamed,
      ),
    );
    agent.clock.advance(60_000);
    expect(await agent.service.pruneTurnEvents()).toBe(0);
    agent.clock.advance(1);
    expect(await agent.service.pruneTurnEvents()).toBe(1);
    expect(
      (await collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "t")))).map((event) => event.id),
    ).toEqual(["0-result"]);
  });
});
