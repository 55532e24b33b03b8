import type { TurnEvent } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { MAX_QUEUED_EVENTS, TurnEventQueue } from "../../src/streaming/turn-event-queue.js";

const delta = (seq: number): TurnEvent => ({
  id: `0-${seq}`,
  event: "output_text.delta",
  data: { delta: "x" },
});

/** A queue whose catch-up tells where it was asked to start, then yields one event from the log. */
function queue() {
  const asked: Array<string | undefined> = [];
  const events = new TurnEventQueue({
    catchUp: async function* (lastEventId) {
      asked.push(lastEventId);
      yield { id: "0-from-log", event: "output_text.delta", data: { delta: "log" } };
    },
  });
  return { events, asked };
}

describe("TurnEventQueue", () => {
  it("hands its reader every event while it keeps up, then ends", async () => {
    const { events, asked } = queue();
    for (let seq = 0; seq < MAX_QUEUED_EVENTS; seq++) events.push(delta(seq));
    events.end();
    const read: TurnEvent[] = [];
    for await (const event of events) read.push(event);
    expect(read.map((event) => event.id)).toEqual(
      Array.from({ length: MAX_QUEUED_EVENTS }, (_, seq) => `0-${seq}`),
    );
    expect(asked).toEqual([]);
  });

  it("drops what it holds once its reader is MAX_QUEUED_EVENTS behind, and goes on from the log after the last event read", async () => {
    const { events, asked } = queue();
    const reader = events[Symbol.asyncIterator]();
    events.push(delta(0));
    events.push(delta(1));
    expect((await reader.next()).value).toMatchObject({ id: "0-0" });
    for (let seq = 2; seq <= MAX_QUEUED_EVENTS + 2; seq++) events.push(delta(seq));
    // Pushed after it fell behind: in the log, not here.
    events.push(delta(MAX_QUEUED_EVENTS + 3));
    events.end();
    const rest: TurnEvent[] = [];
    for (let next = await reader.next(); !next.done; next = await reader.next()) rest.push(next.value);
    expect(rest.map((event) => event.id)).toEqual(["0-from-log"]);
    expect(asked).toEqual(["0-0"]);
  });

  it("goes on from the log from the start when its reader fell behind before taking any event", async () => {
    const { events, asked } = queue();
    for (let seq = 0; seq <= MAX_QUEUED_EVENTS; seq++) events.push(delta(seq));
    const read: TurnEvent[] = [];
    for await (const event of events) read.push(event);
    expect(read.map((event) => event.id)).toEqual(["0-from-log"]);
    expect(asked).toEqual([undefined]);
  });
});
