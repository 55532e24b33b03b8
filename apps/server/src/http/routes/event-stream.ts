import type { TurnEvent } from "@aptix/core";
import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";

/**
 * Answers `text/event-stream`: `produce` hands events to `emit` as they come. Writes are serialized, and a
 * client that goes away only stops the writing: `produce` runs on, so the turn completes and is stored.
 * Comment lines keep idle proxies from closing a quiet stream.
 */
export function sendEventStream(
  c: Context,
  heartbeatMs: number,
  produce: (emit: (event: TurnEvent) => void, isOpen: () => boolean) => Promise<void>,
): Response {
  return streamSSE(c, async (stream) => {
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
    try {
      await produce(
        (event) =>
          write((open) =>
            open.writeSSE({ id: event.id, event: event.event, data: JSON.stringify(event.data) }),
          ),
        () => !stream.aborted && !stream.closed,
      );
    } finally {
      clearInterval(heartbeat);
      await writing;
    }
  });
}
