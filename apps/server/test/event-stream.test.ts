import { once } from "node:events";
import { get, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { httpStatusOf, type TurnEvent } from "@aptix/contracts";
import {
  FOLLOW_PAGE_DELTAS,
  InMemoryTurnEventLog,
  inMemorySessionStores,
  MAX_QUEUED_EVENTS,
} from "@aptix/core/testing";
import { serve } from "@hono/node-server";
import type { Logger } from "pino";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { capturedLog } from "./captured-log.js";
import { HeldProvider } from "./held-provider.js";
import { setup as setupApp } from "./http-app-setup.js";

const AUTH = { authorization: "Bearer alice-key-0123456789" };

function setup(options: { logger?: Logger } = {}) {
  const store = inMemorySessionStores();
  let turnReads = 0;
  const getTurn = store.turns.getTurn.bind(store.turns);
  store.turns.getTurn = (...args) => {
    turnReads++;
    return getTurn(...args);
  };
  const app = setupApp({
    provider: new HeldProvider({ id: "scripted" }),
    store,
    service: { followPollMs: 5, eventFlushMs: 5 },
    ...options,
  });
  return { ...app, turnReads: () => turnReads };
}

interface ParsedEvent {
  id?: string;
  event?: string;
  data: string;
}

function parseEventStream(body: string): ParsedEvent[] {
  return body
    .split("\n\n")
    .filter((block) => block.split("\n").some((line) => line !== "" && !line.startsWith(":")))
    .map((block) => {
      const event: ParsedEvent = { data: "" };
      for (const line of block.split("\n")) {
        const colon = line.indexOf(":");
        const field = line.slice(0, colon);
        const value = line.slice(colon + 2);
        if (field === "id") event.id = value;
        else if (field === "event") event.event = value;
        else if (field === "data") event.data += value;
      }
      return event;
    });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `app` served by Node on a free loopback port, closed after the test: its URL, and the server's sockets. */
async function served(app: ReturnType<typeof setup>["app"]): Promise<{ url: string; sockets: Socket[] }> {
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
  const sockets: Socket[] = [];
  server.on("connection", (socket: Socket) => sockets.push(socket));
  await once(server, "listening");
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets };
}

describe("event streams", () => {
  it("ends a stream whose producer throws with an unsuccessful result event, and tells proxies not to buffer", async () => {
    const { logger, lines } = capturedLog();
    const { service, post } = setup({ logger });
    service.handle = async () => ({
      type: "events",
      events: (async function* (): AsyncIterable<TurnEvent> {
        yield { id: "0-0", event: "output_text.delta", data: { delta: "Hel" } };
        throw new Error("store exploded: params SECRET");
      })(),
      replayed: false,
    });
    const response = await post({ sessionId: "s1", turnId: "t1", instruction: "Hi", stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(response.headers.get("x-accel-buffering")).toBe("no");
    const events = parseEventStream(await response.text());
    expect(events.map((event) => [event.id, event.event])).toEqual([
      ["0-0", "output_text.delta"],
      // No id: it is not one of the turn's events, so following from "0-0" still finds the turn's own result.
      [undefined, "result"],
    ]);
    // What failed is the operator's: the result names the request, the log line the error's type and frames.
    const requestId = response.headers.get("x-request-id");
    expect(JSON.parse(events[1]?.data ?? "null")).toEqual({
      successful: false,
      errors: [
        {
          code: "INTERNAL",
          message: "The stream failed unexpectedly; the request id identifies it in the logs.",
          details: { requestId },
        },
      ],
      warnings: [],
    });
    expect(lines).toContainEqual(
      expect.objectContaining({
        requestId,
        message: "stream failed",
        fault: expect.objectContaining({ type: "Error" }),
      }),
    );
    expect(JSON.stringify(lines)).not.toContain("SECRET");
  });

  it("answers a streamed turn sent again while it runs as JSON SESSION_BUSY, and keeps its result for followers", async () => {
    const { app, provider, post } = setup();
    provider.enqueue({ text: "Finally done." });
    const held = provider.hold();
    const request = { sessionId: "s1", turnId: "t1", instruction: "Hi", stream: true };
    const first = await post(request);
    await held.entered;

    const again = await post(request);
    expect(again.status).toBe(httpStatusOf("SESSION_BUSY"));
    expect(again.headers.get("content-type")).toContain("application/json");
    expect(await again.json()).toMatchObject({ successful: false, errors: [{ code: "SESSION_BUSY" }] });

    held.release();
    const events = parseEventStream(await first.text());
    expect(events.at(-1)).toMatchObject({ id: "0-result", event: "result" });
    const followed = await app.request("/v1/sessions/s1/turns/t1/events", { headers: AUTH });
    expect(parseEventStream(await followed.text())).toEqual(events);
  });

  it.each([
    [
      "in process, cancelling the body",
      async (app: ReturnType<typeof setup>["app"]) => {
        const followed = await app.request("/v1/sessions/s1/turns/t1/events", { headers: AUTH });
        return { response: followed, leave: () => followed.body?.cancel() };
      },
    ],
    [
      "served by Node, closing the connection",
      async (app: ReturnType<typeof setup>["app"]) => {
        const leaving = new AbortController();
        const followed = await fetch(`${(await served(app)).url}/v1/sessions/s1/turns/t1/events`, {
          headers: AUTH,
          signal: leaving.signal,
        });
        return { response: followed, leave: () => leaving.abort() };
      },
    ],
  ])("stops following a turn once its client has left (%s), while the turn goes on", async (_how, follow) => {
    const { app, provider, post, turnReads } = setup();
    provider.enqueue({ text: "Done at last." });
    const held = provider.hold();
    const streamed = await post({ sessionId: "s1", turnId: "t1", instruction: "Hi", stream: true });
    await held.entered;

    const { response, leave } = await follow(app);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    // It polls (every 5 ms) while someone listens: waited for rather than slept for, as a loaded machine
    // runs fewer polls in a given time.
    await vi.waitFor(() => expect(turnReads()).toBeGreaterThan(2), { timeout: 5_000 });
    await leave();
    await sleep(30);
    const afterLeaving = turnReads();
    // And no more once they left.
    await sleep(50);
    expect(turnReads()).toBe(afterLeaving);

    held.release();
    const events = parseEventStream(await streamed.text());
    expect(JSON.parse(events.at(-1)?.data ?? "null")).toMatchObject({
      successful: true,
      result: { primaryOutputText: "Done at last." },
    });
  });

  it("ends every resume with the turn's result, sent again after the result itself", async () => {
    const { app, provider, post } = setup();
    provider.enqueue({ text: "Hello." });
    const live = parseEventStream(
      await (await post({ sessionId: "s1", turnId: "t1", instruction: "Hi", stream: true })).text(),
    );
    expect(live.map((event) => event.id)).toEqual(["0-0", "0-result"]);
    const resume = async (query: string, headers: Record<string, string> = {}) =>
      parseEventStream(
        await (
          await app.request(`/v1/sessions/s1/turns/t1/events${query}`, { headers: { ...AUTH, ...headers } })
        ).text(),
      );
    // The result is the turn's authoritative end: a client that has it gets it again, not an empty stream.
    expect(await resume("", { "last-event-id": "0-result" })).toEqual(live.slice(-1));
    expect(await resume("?lastEventId=0-result")).toEqual(live.slice(-1));
    expect(await resume("", { "last-event-id": "0-0" })).toEqual(live.slice(-1));

    // After a round's result, the next round's events follow, to the turn's latest result.
    provider.enqueue(
      {
        text: "Reading.",
        toolCalls: [
          { name: "read_file", arguments: { path: "a", startLine: null, endLine: null }, callId: "call_1" },
        ],
      },
      { text: "Read." },
    );
    await (await post({ sessionId: "s1", turnId: "t2", instruction: "Read a", stream: true })).text();
    const continued = parseEventStream(
      await (
        await post({
          sessionId: "s1",
          turnId: "t2",
          toolResults: [{ toolCallId: "call_1", executionMs: 1, resultJson: "{}" }],
        })
      ).text(),
    );
    const followed = await app.request("/v1/sessions/s1/turns/t2/events", {
      headers: { ...AUTH, "last-event-id": "0-result" },
    });
    expect(parseEventStream(await followed.text())).toEqual(continued);
    expect(continued.at(-1)).toMatchObject({ id: "1-result", event: "result" });
  });

  it.each([
    ["past the turn's last round", "999999-1", "names round 999999, but the turn's last round is 0"],
    [
      "the result of a round the turn does not have",
      "1-result",
      "names round 1, but the turn's last round is 0",
    ],
    ["no event id of this service", "0-x", "is not an event id of this service"],
  ])("refuses a Last-Event-ID %s with 400 naming the header", async (_name, lastEventId, message) => {
    const { app, provider, post } = setup();
    provider.enqueue({ text: "Hello." });
    await (await post({ sessionId: "s1", turnId: "t1", instruction: "Hi", stream: true })).text();
    for (const response of [
      await app.request("/v1/sessions/s1/turns/t1/events", {
        headers: { ...AUTH, "last-event-id": lastEventId },
      }),
      await app.request(`/v1/sessions/s1/turns/t1/events?lastEventId=${encodeURIComponent(lastEventId)}`, {
        headers: AUTH,
      }),
    ]) {
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        successful: false,
        errors: [
          {
            code: "VALIDATION_FAILED",
            message: `Last-Event-ID ${message}.`,
            details: { fields: [{ path: "Last-Event-ID", message }] },
          },
        ],
        warnings: [],
      });
    }
  });

  it("served by Node, writes to the response itself the headers set before the stream opened and the events a client in process reads", async () => {
    const { app, provider } = setup();
    const { url } = await served(app);
    provider.enqueue({ text: "Hello over a socket." });
    const response = await fetch(`${url}/v1/agent/execute`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: JSON.stringify({ sessionId: "s1", turnId: "t1", instruction: "Hi", stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    expect(response.headers.get("x-accel-buffering")).toBe("no");
    expect(response.headers.get("x-request-id")).toMatch(/./);
    // hono's marker for an answer written already is for Node's adapter, never for the client.
    expect(response.headers.get("x-hono-already-sent")).toBeNull();
    const events = parseEventStream(await response.text());
    expect(events.at(-1)).toMatchObject({ id: "0-result", event: "result" });
    const deltas = events.slice(0, -1);
    expect(deltas.every((event) => event.event === "output_text.delta")).toBe(true);
    expect(deltas.map((event) => JSON.parse(event.data).delta).join("")).toBe("Hello over a socket.");
    const followed = await app.request("/v1/sessions/s1/turns/t1/events", { headers: AUTH });
    expect(parseEventStream(await followed.text())).toEqual(events);
  });

  describe("a follower whose client does not read", () => {
    /**
     * 8,000 deltas of 1,000 characters, each event a little more than 1,000 bytes: 8 MB, twice what loopback's
     * kernel buffers take from a client that does not read (`tcp_wmem`'s usual 4 MB at most).
     */
    const words = Array.from({ length: 8_000 }, (_, i) => `${String(i).padStart(6, "0")}${"x".repeat(993)} `);

    /** The app on a log that counts the deltas its reads hand out, its provider to answer `words`. */
    function countingReads() {
      const store = inMemorySessionStores();
      const log = new InMemoryTurnEventLog(store.turns);
      let listed = 0;
      const list = log.list.bind(log);
      log.list = async (...args) => {
        const deltas = await list(...args);
        listed += deltas.length;
        return deltas;
      };
      const { app, provider, post, get } = setupApp({ store, events: log, service: { eventFlushMs: 5 } });
      provider.enqueue({ text: words.join("") });
      return { app, post, get, listed: () => listed };
    }

    /** A turn of `words` streamed and ended. */
    async function endedTurn() {
      const { app, post, listed } = countingReads();
      const live = await post({ sessionId: "s1", turnId: "t1", instruction: "Hi", stream: true });
      expect(parseEventStream(await live.text())).toHaveLength(words.length + 1);
      // What the live stream read of the log (it was not read while the turn ran) is not the follower's.
      const before = listed();
      return { app, listed: () => listed() - before };
    }

    /** The count once it has not changed for a few looks in a row: what was read before the reads stopped. */
    async function settled(count: () => number): Promise<number> {
      let last = -1;
      for (let same = 0; same < 3; ) {
        await sleep(50);
        same = count() === last ? same + 1 : 0;
        last = count();
      }
      return last;
    }

    /** Every delta once, in order, then the result: the whole answer, as the client reads it at last. */
    function expectWhole(events: ParsedEvent[]) {
      expect(events.map((event) => event.id)).toEqual([...words.map((_word, seq) => `0-${seq}`), "0-result"]);
      expect(events.slice(0, -1).map((event) => JSON.parse(event.data).delta)).toEqual(words);
      expect(JSON.parse(events.at(-1)?.data ?? "null")).toMatchObject({
        successful: true,
        result: { primaryOutputText: words.join("") },
      });
    }

    it("in process: the body's queue fills, the follower stops reading the log, and goes on once it is read", async () => {
      const { app, listed } = await endedTurn();
      const followed = await app.request("/v1/sessions/s1/turns/t1/events", { headers: AUTH });
      const stalled = await settled(listed);
      // A page of deltas read, of which some 16 KiB wait in the body, and no more.
      expect(stalled).toBe(FOLLOW_PAGE_DELTAS);
      expectWhole(parseEventStream(await followed.text()));
      expect(listed()).toBe(words.length);
    });

    it("served by Node: the socket's buffer stays bounded, the follower stops reading the log, and goes on once it drains", async () => {
      const { app, listed } = await endedTurn();
      const { url, sockets } = await served(app);
      // Node's own client: a response nobody reads stops reading its socket once 16 KiB wait in it.
      const [followed] = (await once(
        get(`${url}/v1/sessions/s1/turns/t1/events`, { headers: AUTH }),
        "response",
      )) as [IncomingMessage];
      const stalled = await settled(listed);
      // Nothing more is written once the response's buffer is full: at most Node's 16 KiB and the event that
      // filled it stay in the process, and the follower has read at most a page past what the socket took.
      const [socket] = sockets;
      if (socket === undefined) throw new Error("no connection");
      expect(socket.writableNeedDrain).toBe(true);
      expect(socket.writableLength).toBeLessThan(16 * 1024 + 2 * 1024);
      const takenBySocket = Math.ceil(socket.bytesWritten / 1_000);
      expect(stalled).toBeLessThanOrEqual(takenBySocket + FOLLOW_PAGE_DELTAS);
      expect(stalled).toBeLessThan(words.length);
      let text = "";
      for await (const chunk of followed) text += chunk;
      expectWhole(parseEventStream(text));
      expect(listed()).toBe(words.length);
    });

    it("a live stream: past the events a reader may leave unread, its turn's queue is dropped and the stream goes on from the log", async () => {
      const { post, get, listed } = countingReads();
      const live = await post({ sessionId: "s1", turnId: "t1", instruction: "Hi", stream: true });
      for (let status = ""; status !== "completed"; await sleep(20)) {
        const session = (await (await get("/v1/sessions/s1")).json()) as {
          result: { turns: Array<{ status: string }> };
        };
        status = session.result.turns[0]?.status ?? "";
      }
      // The turn ended long before its client read: the stream, fallen behind, reads the log a page at a time.
      expect(listed()).toBeLessThanOrEqual(FOLLOW_PAGE_DELTAS);
      expectWhole(parseEventStream(await live.text()));
      // All but the few events it took before it fell behind came from the log.
      expect(listed()).toBeGreaterThan(words.length - MAX_QUEUED_EVENTS);
    });
  });
});
