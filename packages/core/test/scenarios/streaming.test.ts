import { describe, expect, it } from "vitest";
import type { TurnEvent } from "../../src/index.js";
import { createTestAgent, errorsOf, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

async function collect(events: AsyncIterable<TurnEvent>): Promise<TurnEvent[]> {
  const seen: TurnEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe("streamed turns and their followers", () => {
  it("lets a follower that joins mid-turn see every event the stream saw, once, ending with the result", async () => {
    const agent = await createTestAgent({ eventFlushMs: 5, followPollMs: 20 });
    agent.provider.enqueue({ text: "one two three four" });
    const held = agent.provider.holdNextCall();
    const streamed: TurnEvent[] = [];
    const running = agent.service.execute(
      { sessionId: "s", turnId: "t", instruction: "Count", stream: true },
      PRINCIPAL,
      {
        onEvent: (event) => streamed.push(event),
      },
    );
    await held.entered;
    const follower = resultOf(await agent.service.followTurn(PRINCIPAL, "s", "t"));
    const following = collect(follower);
    held.release();
    const result = await running;

    expect(streamed.map((event) => event.id)).toEqual(["0-0", "0-1", "0-2", "0-3", "0-result"]);
    expect(await following).toEqual(streamed);
    expect(streamed.at(-1)).toEqual({ id: "0-result", event: "result", data: result });

    // A client that dropped off after "0-1" gets the rest exactly once.
    const resumed = await collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "t", "0-1")));
    expect(resumed).toEqual(streamed.slice(2));
    expect(await collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "t", "0-result")))).toEqual(
      [],
    );
  });

  it("streams a continuation's answer when its user turn asked for streaming, as the next round", async () => {
    const agent = await createTestAgent({ eventFlushMs: 5 });
    agent.provider.enqueue(
      { text: "Reading.", toolCalls: [{ name: "read_file", arguments: { path: "a" }, callId: "c1" }] },
      { text: "All read." },
    );
    const first: TurnEvent[] = [];
    responseOf(
      await agent.service.execute(
        { sessionId: "s", turnId: "t", instruction: "Read", stream: true },
        PRINCIPAL,
        {
          onEvent: (event) => first.push(event),
        },
      ),
    );
    const continuation = {
      sessionId: "s",
      turnId: "t",
      toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: "{}" }],
    };
    expect(await agent.service.streamsAnswer(continuation, PRINCIPAL)).toBe(true);
    const second: TurnEvent[] = [];
    responseOf(
      await agent.service.execute(continuation, PRINCIPAL, { onEvent: (event) => second.push(event) }),
    );

    expect(first.map((event) => event.id)).toEqual(["0-0", "0-result"]);
    expect(second.map((event) => event.id)).toEqual(["1-0", "1-1", "1-result"]);
    // Following the whole turn replays both rounds in order.
    const all = await collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "t")));
    expect(all.map((event) => event.id)).toEqual(["0-0", "0-result", "1-0", "1-1", "1-result"]);
    // An already-applied continuation sent again answers with its stored round's result.
    const again: TurnEvent[] = [];
    await agent.service.execute(continuation, PRINCIPAL, { onEvent: (event) => again.push(event) });
    expect(again.map((event) => event.id)).toEqual(["1-result"]);
  });

  it("gives a turn that did not stream its results only, and refuses a foreign id", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Plain." });
    const result = await agent.execute({ sessionId: "s", turnId: "t", instruction: "Hi" });
    expect(
      await agent.service.streamsAnswer({ sessionId: "s", turnId: "t", instruction: "Hi" }, PRINCIPAL),
    ).toBe(false);
    expect(await collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "t")))).toEqual([
      { id: "0-result", event: "result", data: result },
    ]);
    expect(errorsOf(await agent.service.followTurn(PRINCIPAL, "s", "t", "yesterday"))).toMatchObject([
      { code: "VALIDATION_FAILED", details: { fields: [{ path: "Last-Event-ID" }] } },
    ]);
    expect(errorsOf(await agent.service.followTurn("bob", "s", "t"))).toMatchObject([
      { code: "SESSION_NOT_FOUND" },
    ]);
    expect(errorsOf(await agent.service.followTurn(PRINCIPAL, "s", "nope"))).toMatchObject([
      { code: "TURN_NOT_FOUND" },
    ]);
  });

  it("ends a failed streamed round with an unsuccessful result event", async () => {
    const agent = await createTestAgent({ maxLlmCallsPerRequest: 1 });
    agent.provider.enqueue({ text: "Looking", toolCalls: [{ name: "lookup", arguments: { query: "x" } }] });
    const events: TurnEvent[] = [];
    const result = await agent.service.execute(
      { sessionId: "s", turnId: "t", instruction: "Go", stream: true },
      PRINCIPAL,
      {
        onEvent: (event) => events.push(event),
      },
    );
    expect(result.successful).toBe(false);
    expect(events.map((event) => event.event)).toEqual(["output_text.delta", "result"]);
    expect(events.at(-1)?.data).toMatchObject({
      successful: false,
      errors: [{ code: "ITERATION_LIMIT_EXCEEDED" }],
    });
  });
  it("answers a request refused before its turn runs without turn events, so no event id is taken", async () => {
    const agent = await createTestAgent({ eventFlushMs: 5, followPollMs: 10 });
    agent.provider.enqueue({ text: "Still here." });
    const held = agent.provider.holdNextCall();
    const request = { sessionId: "s", turnId: "t", instruction: "Go", stream: true };
    const running = collect(resultOf(await agent.service.stream(request, PRINCIPAL)));
    await held.entered;

    // The same turn sent again while it runs: SESSION_BUSY, and no `0-result` event to confuse a client.
    const again: TurnEvent[] = [];
    const busy = await agent.service.execute(request, PRINCIPAL, { onEvent: (event) => again.push(event) });
    expect(errorsOf(busy)).toMatchObject([{ code: "SESSION_BUSY" }]);
    expect(again).toEqual([]);
    expect(errorsOf(await agent.service.stream(request, PRINCIPAL))).toMatchObject([
      { code: "SESSION_BUSY" },
    ]);
    expect(
      errorsOf(await agent.service.stream({ ...request, instruction: "Something else" }, PRINCIPAL)),
    ).toMatchObject([{ code: "TURN_ID_CONFLICT" }]);
    expect(
      errorsOf(
        await agent.service.stream(
          {
            sessionId: "s",
            turnId: "t",
            toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: "{}" }],
          },
          PRINCIPAL,
        ),
      ),
    ).toMatchObject([{ code: "TURN_NOT_AWAITING_TOOLS" }]);

    // A client following the turn gets its real result.
    const following = collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "t")));
    held.release();
    const streamed = await running;
    expect(streamed.map((event) => event.id)).toEqual(["0-0", "0-1", "0-result"]);
    expect(streamed.at(-1)?.data).toMatchObject({ successful: true });
    expect(await following).toEqual(streamed);
  });

  it("stops following a turn once the follower's signal aborts, while the turn goes on", async () => {
    const agent = await createTestAgent({ eventFlushMs: 5, followPollMs: 10_000 });
    agent.provider.enqueue({ text: "Done." });
    const held = agent.provider.holdNextCall();
    const running = agent.service.execute(
      { sessionId: "s", turnId: "t", instruction: "Go", stream: true },
      PRINCIPAL,
      { onEvent: () => undefined },
    );
    await held.entered;
    const left = new AbortController();
    const following = collect(
      resultOf(await agent.service.followTurn(PRINCIPAL, "s", "t", undefined, left.signal)),
    );
    left.abort();
    // Ends at once rather than at the next poll, ten seconds away.
    expect(await following).toEqual([]);
    held.release();
    expect(responseOf(await running)).toMatchObject({ primaryOutputText: "Done." });
  });
});
