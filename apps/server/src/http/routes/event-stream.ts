import { ServerResponse } from "node:http";
import { fail } from "@aptix/contracts";
import type { TurnEvent } from "@aptix/core";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import type { AppEnv } from "../app-env.js";
import { noted } from "../send-result.js";

/** Where a stream's text goes. A write never waits: see `sendEventStream`. */
interface EventSink {
  write(text: string): void;
  end(): void;
}

/**
 * Answers `text/event-stream`: `produce` hands events to `emit` as they come. A client that goes away only aborts
 * `signal`: `produce` decides whether its work goes on (a turn does, so it completes and is stored). Comment lines
 * keep idle proxies from closing a quiet stream.
 *
 * Under Node the events are written to the ServerResponse itself: hono's SSE helper would carry each through a
 * TransformStream and a ReadableStream (promises and buffers a delta), which at thousands of open streams was a
 * large share of the serving process's CPU and garbage (docs/turn-cost.md, "Capacity"). Elsewhere (`app.request`
 * in tests) they are the body of the Response. Either way an event is written as it comes, without waiting for
 * the client to read the last: a turn runs at the model's pace whatever its reader's, so a slow reader's backlog
 * is held somewhere until it reads, and the socket's buffer holds it without a promise per event. The backlog is
 * at most the turn's answer.
 */
export function sendEventStream(
  c: Context<AppEnv>,
  heartbeatMs: number,
  producer: (emit: (event: TurnEvent) => void, signal: AbortSignal) => Promise<void>,
): Response {
  // The result carries the app's notices as a JSON answer does.
  const produce: typeof producer = (emit, signal) =>
    producer(
      (event) => emit(event.event === "result" ? { ...event, data: noted(c, event.data) } : event),
      signal,
    );
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
    void stream(nodeSink(outgoing, left.signal), heartbeatMs, produce, left.signal);
    return c.newResponse(null, { headers: RESPONSE_ALREADY_SENT.headers });
  }
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const open = () => !left.signal.aborted;
      void stream(
        {
          write: (text) => open() && controller.enqueue(encoder.encode(text)),
          end: () => open() && controller.close(),
        },
        heartbeatMs,
        produce,
        left.signal,
      );
    },
    cancel: () => left.abort(),
  });
  return c.body(body, 200);
}

function nodeSink(outgoing: ServerResponse, left: AbortSignal): EventSink {
  return {
    write: (text) => {
      if (!left.aborted) outgoing.write(text);
    },
    end: () => {
      if (!left.aborted) outgoing.end();
    },
  };
}

/** Writes what `produce` emits to `sink` as server-sent events, with a comment line every `heartbeatMs`. */
async function stream(
  sink: EventSink,
  heartbeatMs: number,
  produce: (emit: (event: TurnEvent) => void, signal: AbortSignal) => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  const heartbeat = setInterval(() => sink.write(": keep-alive\n\n"), heartbeatMs);
  let resultSent = false;
  try {
    await produce((event) => {
      resultSent ||= event.event === "result";
      sink.write(serverSentEvent(event.event, JSON.stringify(event.data), event.id));
    }, signal);
  } catch (error) {
    // Every stream ends with a result. This one has no id: it is no stored event of the turn, so a client that
    // follows the turn from its last id still gets the turn's own result.
    if (!resultSent) {
      const failure = fail(
        "INTERNAL",
        `The stream failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      sink.write(serverSentEvent("result", JSON.stringify(failure)));
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
