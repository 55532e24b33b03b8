import { createParser, type EventSourceMessage } from "eventsource-parser";

/**
 * The messages of a `text/event-stream` body, as they arrive. A message cut off by the end of the body is
 * dropped (it never got its blank line), so a broken stream yields only complete events. Reading errors
 * (a dropped connection, an abort) are thrown as they come; returning early cancels the body.
 */
export async function* serverSentEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<EventSourceMessage> {
  const messages: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => messages.push(message) });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) {
        finished = true;
        return;
      }
      parser.feed(decoder.decode(chunk.value, { stream: true }));
      yield* messages.splice(0);
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
