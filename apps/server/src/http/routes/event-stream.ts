import { ServerResponse } from "node:http";
import { fail, type TurnEvent } from "@aptix/contracts";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import type { AppEnv } from "../app-env.js";
import { reportFault } from "../report-fault.js";
import { noted } from "../send-result.js";
import { withRequestId } from "../with-request-id.js";

/**
 * The bytes a stream's client may leave unread before the next event waits for it: Node's own default for a
 * response (`writableHighWaterMark`), and the body's queue outside Node.
 */
const UNREAD_BYTES = 16 * 1024;

/** Where a stream's text goes. */
interface EventSink {
  /**
   * Writes `text`; answers a promise when the client has `UNREAD_BYTES` unread (nothing more should be written
   * until it settles: once the client has read, or has left), undefined while it has room.
   */
  write(text: string): Promise<void> | undefined;
  /** Whether the client has read what was written before (a heartbeat is only worth sending then). */
  reading(): boolean;
  end(): void;
}

/**
 * Answers `text/event-stream` with the events `events` yields. The next event is taken once the client has
 * room for it: a client that does not read stops the stream from taking more (a follower from reading the
 * store), rather than having its backlog held in memory. A client that goes away aborts the signal given to
 * `events` and stops the taking; whether the work behind the events goes on is theirs to decide (a turn does,
 * so it completes and is stored). Comment lines keep idle proxies from closing a quiet stream.
 *
 * Under Node the events are written to the ServerResponse itself: hono's SSE helper would carry each through a
 * TransformStream and a ReadableStream (promises and buffers a delta), which at thousands of open streams was a
 * large share of the serving process's CPU and garbage (docs/turn-cost.md, "Capacity"); a write waits only
 * when the socket's buffer is full. Elsewhere (`app.request` in tests) they are the body of the Response, whose
 * queue is bounded the same way.
 */
export function sendEventStream(
  c: Context<AppEnv>,
  heartbeatMs: number,
  events: (signal: AbortSignal) => AsyncIterable<TurnEvent>,
): Response {
  c.header("Content-Type", "text/event-stream");
  c.header("Cache-Control", "no-cache");
  // Buffering proxies (nginx) would otherwise hold the deltas back until the stream ends.
  c.header("X-Accel-Buffering", "no");
  const left = new AbortController();
  const outgoing = c.env?.outgoing;
  if (outgoing instanceof ServerResponse) {
    // The headers set so far: one a middleware adds once the route has answered (CORS's `Vary`) is not sent.
    outgoing.writeHead(200, Object.fromEntries(c.res.headers));
    outgoing.flushHeaders();
    outgoing.on("close", () => {
      if (!outgoing.writableFinished) left.abort();
    });
    void stream(c, nodeSink(outgoing, left.signal), heartbeatMs, events, left.signal);
    return c.newResponse(null, { headers: RESPONSE_ALREADY_SENT.headers });
  }
  return c.body(bodyStream(c, heartbeatMs, events, left), 200);
}

function nodeSink(outgoing: ServerResponse, left: AbortSignal): EventSink {
  return {
    write: (text) => {
      if (left.aborted || outgoing.write(text)) return undefined;
      return new Promise<void>((resolve) => {
        const done = () => {
          outgoing.off("drain", done);
          left.removeEventListener("abort", done);
          resolve();
        };
        outgoing.once("drain", done);
        left.addEventListener("abort", done, { once: true });
      });
    },
    reading: () => !outgoing.writableNeedDrain,
    end: () => {
      if (!left.aborted) outgoing.end();
    },
  };
}

/** The stream as a Response body, pulled by its reader: a write waits while `UNREAD_BYTES` are queued. */
function bodyStream(
  c: Context<AppEnv>,
  heartbeatMs: number,
  events: (signal: AbortSignal) => AsyncIterable<TurnEvent>,
  left: AbortController,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  // One wait for room, however many writes ask (a heartbeat's too): the reader's next pull ends it.
  let room: { wait: Promise<void>; end: () => void } | undefined;
  const wait = () => {
    if (room === undefined) {
      let end!: () => void;
      const waiting = new Promise<void>((resolve) => {
        end = resolve;
      });
      room = { wait: waiting, end };
    }
    return room.wait;
  };
  const wake = () => {
    room?.end();
    room = undefined;
  };
  left.signal.addEventListener("abort", wake, { once: true });
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const open = () => !left.signal.aborted;
        const full = () => (controller.desiredSize ?? 0) <= 0;
        void stream(
          c,
          {
            write: (text) => {
              if (!open()) return undefined;
              controller.enqueue(encoder.encode(text));
              return full() ? wait() : undefined;
            },
            reading: () => !full(),
            end: () => open() && controller.close(),
          },
          heartbeatMs,
          events,
          left.signal,
        );
      },
      pull: wake,
      cancel: () => left.abort(),
    },
    { highWaterMark: UNREAD_BYTES, size: (chunk) => chunk.byteLength },
  );
}

/**
 * Writes the events to `sink` as server-sent events, taking each once the sink has room, with a comment line
 * every `heartbeatMs` while the client reads. An INTERNAL result carries the request id (`withRequestId`) and the result the app's notices, as it
 * would unstreamed.
 */
async function stream(
  c: Context<AppEnv>,
  sink: EventSink,
  heartbeatMs: number,
  events: (signal: AbortSignal) => AsyncIterable<TurnEvent>,
  signal: AbortSignal,
): Promise<void> {
  const requestId = c.get("requestId");
  const heartbeat = setInterval(() => {
    if (sink.reading()) void sink.write(": keep-alive\n\n");
  }, heartbeatMs);
  let resultSent = false;
  try {
    for await (const event of events(signal)) {
      const isResult = event.event === "result";
      resultSent ||= isResult;
      // The result carries the app's notices as a JSON answer does.
      const data = isResult ? noted(c, withRequestId(event.data, requestId)) : event.data;
      const full = sink.write(serverSentEvent(event.event, JSON.stringify(data), event.id));
      if (full) await full;
      // Nobody reads any more: the events are left where they are (a turn's in its log).
      if (signal.aborted) break;
    }
  } catch (error) {
    reportFault(c, error, "stream failed");
    // Every stream ends with a result. This one has no id: it is no stored event of the turn, so a client that
    // follows the turn from its last id still gets the turn's own result.
    if (!resultSent) {
      const failure = fail(
        "INTERNAL",
        "The stream failed unexpectedly; the request id identifies it in the logs.",
        {
          requestId,
        },
      );
      void sink.write(serverSentEvent("result", JSON.stringify(noted(c, failure))));
    }
  } finally {
    clearInterval(heartbeat);
    sink.end();
  }
}

/**
 * One event. Its name and id are the service's own (no line breaks), and `data` is JSON, which has none either:
 * a string's line breaks are escaped in it, so the event is one `data` line.
 */
function serverSentEvent(event: string, data: string, id?: string): string {
  return `event: ${event}\ndata: ${data}\n${id === undefined ? "" : `id: ${id}\n`}\n`;
}
