/**
 * A fast answer to slow readers, over real HTTP on either store (one file each, so that the two run side by side:
 * a service in this process points the SDKs at its scripted servers through `process.env`): the scripted provider streams a 64,000-character
 * answer in 8,000 deltas as fast as it can, and two clients read at 20 KB/s, far slower. One reads the turn's own
 * stream; the other follows the turn from its first event, drops off mid-way and resumes with `Last-Event-ID`.
 * The server takes each event once its client has room (the live stream's backlog waits in the turn's queue, the
 * follower's in the store): every delta reaches each client once, in order, and the text is the answer.
 *
 * Each reader waits, after its first event, until the provider has finished the answer, so the backlog is there
 * whatever the machine's speed; from then on it reads no faster than 20 KB/s (a budget of bytes since it
 * started, so a slow machine only makes it slower).
 */

import { describe, expect, it } from "vitest";
import {
  API_KEYS,
  type EventStream,
  PROVIDER_CONTEXTS,
  resultOf,
  type SseEvent,
  streamExecute,
  streamTurnEvents,
  uniqueId,
  waitFor,
} from "../../src/e2e/index.js";
import { setUpBothProviders } from "./both-providers.js";

const apiKey = API_KEYS.alice;
const DELTAS = 8_000;
/** 8 characters each, numbered: a delta lost, repeated or out of order shows. */
const chunks = Array.from({ length: DELTAS }, (_, i) => `${String(i).padStart(7, "0")} `);
const answer = chunks.join("");
const BYTES_PER_SECOND = 20_000;
const ids = [...chunks.map((_chunk, seq) => `0-${seq}`), "0-result"];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Reads `stream` at `BYTES_PER_SECOND` at most, until it ends or `stopAfter` events were read: the events read
 * (those of the first wait included).
 */
async function readSlowly(stream: EventStream, started: number, stopAfter = Number.POSITIVE_INFINITY) {
  const read: SseEvent[] = [];
  while (read.length < stopAfter) {
    const event = await stream.next();
    if (event === undefined) break;
    read.push(event);
    const due = started + (stream.bytesRead / BYTES_PER_SECOND) * 1000;
    const early = due - performance.now();
    if (early > 0) await sleep(early);
  }
  return read;
}

const deltaTexts = (events: readonly SseEvent[]) =>
  events
    .filter((event) => event.event === "output_text.delta")
    .map((event) => (JSON.parse(event.data) as { delta: string }).delta);

/** The scenario, on `store`: its own service and scripted servers. */
export function describeSlowReaders(store: "pglite" | "postgres"): void {
  describe(`slow readers on ${store}`, () => {
    const providers = setUpBothProviders({ store });

    it("delivers every delta of a fast 64,000-character answer once to a 20 KB/s reader, and to one that resumes mid-way with Last-Event-ID", async () => {
      const rig = providers.rigs.openai;
      const { url } = providers.service;
      const sessionId = uniqueId(`slow-${store}`);
      rig.enqueue({ text: chunks, usage: { input: 20, output: DELTAS } });

      const live = await streamExecute(
        url,
        {
          sessionId,
          turnId: "t1",
          instruction: "Answer at length.",
          conversationContextId: PROVIDER_CONTEXTS.openai,
          stream: true,
        },
        apiKey,
      );
      expect(live.status).toBe(200);
      const first = await live.next();
      expect(first?.id).toBe("0-0");
      const follower = await streamTurnEvents(url, sessionId, "t1", { apiKey });
      const followed = [await follower.next()];
      expect(followed[0]?.id).toBe("0-0");
      // The answer is out before either reader goes on: all of it waits for them at the server.
      await waitFor(() => rig.answerFinished(0), "the provider to finish its answer");

      const started = performance.now();
      const liveRead = readSlowly(live, started);
      const followerRead = (async () => {
        const before = await readSlowly(follower, started, DELTAS / 2);
        follower.abort();
        const lastSeen = before.at(-1)?.id;
        expect(lastSeen).toBe(`0-${DELTAS / 2}`);
        const resumed = await streamTurnEvents(url, sessionId, "t1", { apiKey, lastEventId: lastSeen });
        return [...before, ...(await readSlowly(resumed, performance.now()))];
      })();
      const [liveRest, followerRest] = await Promise.all([liveRead, followerRead]);

      for (const events of [
        [first, ...liveRest],
        [...followed, ...followerRest],
      ] as SseEvent[][]) {
        expect(events.map((event) => event.id)).toEqual(ids);
        expect(deltaTexts(events).join("")).toBe(answer);
        expect(resultOf(events)).toMatchObject({
          successful: true,
          result: { kind: "final", primaryOutputText: answer, usage: { outputTokens: DELTAS } },
        });
      }
    });
  });
}
