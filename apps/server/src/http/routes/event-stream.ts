import { fail } from "@aptix/contracts";
import type { TurnEvent } from "@aptix/core";
import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";

/**
 * Answers `text/event-stream`: `produce` hands events to `emit` as they come. Writes are serialized, and a
 * client that goes away only aborts `signal`: `produce` decides whether its work goes on (a turn does, so it
 * completes and is stored). Comment lines keep idle proxies from closing a quiet stream.
 */
export function sendEventStream(
  c: Context,
  heartbeatMs: number,
  produce: (emit: (event: TurnEvent) => void, signal: AbortSignal) => Promise<void>,
): Response {
  // Buffering proxies (nginx) would otherwise hold the deltas back until the stream ends.
  c.header("X-Accel-Buffering", "no");
  return streamSSE(c, async (stream) => {
    const left = new AbortController();
    stream.onAbort(() => left.abort());
    let writing = Promise.resolve();
    const write = (task: (open: SSEStreamingApi) => Promise<void>) => {
      writing = writing
        .then(() => (stream.aborted || stream.closed ? undefined : task(stream)))
        .catch(() => undefined);
    };
    const heartbeat = setInterval(
      () => write((open) => open.write(": keep-alive\n\n").then(() => undefined)),
      heartbeatMs,
    );
    let resultSent = false;
    try {
      await produce((event) => {
        resultSent ||= event.event === "result";
        write((open) =>
          open.writeSSE({ id: event.id, event: event.event, data: JSON.stringify(event.data) }),
        );
      }, left.signal);
    } catch (error) {
      // Every stream ends with a result. This one has no id: it is no stored event of the turn, so a client
      // that follows the turn from its last id still gets the turn's own result.
      if (!resultSent) {
        const failure = fail(
          "INTERNAL",
          `The stream failed: ${error instanceof Error ? error.message : String(error)}`,
        );
        write((open) => open.writeSSE({ event: "result", data: JSON.stringify(failure) }));
      }
    } finally {
      clearInterval(heartbeat);
      await writing;
    }
  });
}
