import type { TurnEvent } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import {
  collect,
  createTestAgent,
  errorsOf,
  PRINCIPAL,
  responseOf,
  resultOf,
} from "../support/test-agent.js";

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
    // One that already has the result gets it again: a resume always ends with the turn's result.
    expect(await collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "t", "0-result")))).toEqual(
      streamed.slice(-1),
    );
  });

  it("refuses a Last-Event-ID that names no event of the turn, naming the header", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({
      text: "Reading.",
      toolCalls: [{ name: "read_file", arguments: { path: "a" } }],
    });
    responseOf(await agent.service.execute({ sessionId: "s", turnId: "t", instruction: "Read" }, PRINCIPAL));
    for (const [lastEventId, message] of [
      ["1-0", "names round 1, but the turn's last round is 0"],
      ["999999-result", "names round 999999, but the turn's last round is 0"],
      ["0-", "is not an event id of this service"],
    ]) {
      expect(errorsOf(await agent.service.followTurn(PRINCIPAL, "s", "t", lastEventId))).toEqual([
        {
          code: "VALIDATION_FAILED",
          message: `Last-Event-ID ${message}.`,
          details: { fields: [{ path: "Last-Event-ID", message }] },
        },
      ]);
    }
    // A running round has no result yet, so no id can name it.
    agent.provider.enqueue({ text: "Later." });
    const held = agent.provider.holdNextCall();
    const running = agent.service.execute({ sessionId: "s", turnId: "t2", instruction: "Go" }, PRINCIPAL);
    await held.entered;
    expect(errorsOf(await agent.service.followTurn(PRINCIPAL, "s", "t2", "0-result"))).toMatchObject([
      {
        details: {
          fields: [{ path: "Last-Event-ID", message: "names the result of round 0, which has none yet" }],
        },
      },
    ]);
    held.release();
    responseOf(await running);
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
    // The continuation does not ask to stream: it is answered as events because its user turn was.
    const handled = await agent.service.handle(continuation, PRINCIPAL);
    expect(handled.type).toBe("events");
    const second = handled.type === "events" ? await collect(handled.events) : [];

    expect(first.map((event) => event.id)).toEqual(["0-0", "0-result"]);
    expect(second.map((event) => event.id)).toEqual(["1-0", "1-1", "1-result"]);
    // Following the whole turn replays both rounds in order.
    const all = await collect(resultOf(await agent.service.followTurn(PRINCIPAL, "s", "t")));
    expect(all.map((event) => event.id)).toEqual(["0-0", "0-result", "1-0", "1-1", "1-result"]);
    // An already-applied continuation sent again answers with its stored round's text as one delta, then its
    // result: the deltas add up to the answer as they did the first time.
    const again: TurnEvent[] = [];
    const stored = responseOf(
      await agent.service.execute(continuation, PRINCIPAL, { onEvent: (event) => again.push(event) }),
    );
    expect(again.map((event) => event.id)).toEqual(["1-999999999", "1-result"]);
    expect(again[0]).toEqual({
      id: "1-999999999",
      event: "output_text.delta",
      data: { delta: stored.kind === "final" ? stored.primaryOutputText : "" },
    });
  });

  it("gives a turn that did not stream its results only, and refuses a foreign id", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Plain." });
    const result = await agent.execute({ sessionId: "s", turnId: "t", instruction: "Hi" });
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
    // The call's text was not the answer: a reset drops it before the failure.
    expect(events.map((event) => event.event)).toEqual(["output_text.delta", "output_text.reset", "result"]);
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

/** What a client shows: the deltas since the last `output_text.reset`. */
function shownText(events: readonly TurnEvent[]): string {
  let shown = "";
  for (const event of events) {
    if (event.event === "output_text.reset") shown = "";
    else if (event.event === "output_text.delta") shown += event.data.delta;
  }
  return shown;
}

describe("streamed text adds up to the answer (docs/http-api.md, Streaming)", () => {
  const toReview = { mode: "review", reason: "The user asked for a review.", branch: false };

  async function streamed(agent: Awaited<ReturnType<typeof createTestAgent>>, turnId: string, body: object) {
    const events: TurnEvent[] = [];
    const result = await agent.service.execute({ sessionId: "s", turnId, ...body } as never, PRINCIPAL, {
      onEvent: (event) => events.push(event),
    });
    return { events, response: responseOf(result) };
  }

  it("drops an intermediate call's text with a reset: server tools, then the final answer", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Let me look that up.", toolCalls: [{ name: "lookup", arguments: { query: "x" } }] },
      { text: "Found it: x." },
    );
    const { events, response } = await streamed(agent, "t", { instruction: "Find x", stream: true });
    expect(response).toMatchObject({ kind: "final", primaryOutputText: "Found it: x." });
    expect(shownText(events)).toBe("Found it: x.");
    expect(events.filter((event) => event.event === "output_text.reset")).toHaveLength(1);
    // Ids stay one sequence across deltas and resets.
    expect(events.map((event) => event.id).slice(0, -1)).toEqual(events.slice(0, -1).map((_, i) => `0-${i}`));
  });

  it("streams the welcome of a mode the turn changed to, before the final answer", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { text: "Switching.", toolCalls: [{ name: "agent_change_mode", arguments: toReview }] },
      { text: "Send me the diff." },
    );
    const { events, response } = await streamed(agent, "t", { instruction: "Review this", stream: true });
    expect(response).toMatchObject({
      kind: "final",
      primaryOutputText: "Switched to code review.\n\nSend me the diff.",
    });
    expect(shownText(events)).toBe(response.kind === "final" ? response.primaryOutputText : "");
    expect(events).toContainEqual(expect.objectContaining({ data: { delta: "Switched to code review." } }));
  });

  it("ends with the welcome alone when the model says nothing after the change", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ toolCalls: [{ name: "agent_change_mode", arguments: toReview }] }, { text: "" });
    const { events, response } = await streamed(agent, "t", { instruction: "Review this", stream: true });
    expect(response).toMatchObject({ kind: "final", primaryOutputText: "Switched to code review." });
    expect(shownText(events)).toBe("Switched to code review.");
  });

  it("shows a continuation's message alone, and the welcome with the turn's final answer in the next round", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue(
      { toolCalls: [{ name: "agent_change_mode", arguments: toReview }] },
      {
        text: "Reading the file.",
        toolCalls: [{ name: "read_file", arguments: { path: "a.ts" }, callId: "c1" }],
      },
      { text: "Looks fine." },
    );
    const first = await streamed(agent, "t", { instruction: "Review a.ts", stream: true });
    expect(first.response).toMatchObject({
      kind: "client_tool_continuation",
      toolContinuationMessage: "Reading the file.",
    });
    expect(shownText(first.events)).toBe("Reading the file.");

    const second = await streamed(agent, "t", {
      toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: '"const a = 1;"' }],
    });
    expect(second.response).toMatchObject({
      kind: "final",
      primaryOutputText: "Switched to code review.\n\nLooks fine.",
    });
    expect(shownText(second.events)).toBe("Switched to code review.\n\nLooks fine.");
  });
});
