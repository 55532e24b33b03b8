/** Writes a planned `text/event-stream` answer the way both real APIs do: `event: <type>` + `data: <json>`. */
import type { ScriptedAnswer, ScriptedRequestRecord } from "./recorded-request.js";
import type { ScriptedExchange } from "./scripted-exchange.js";
import { pauseUnlessAborted } from "./step-timing.js";

/** A server-sent event and the pause before writing it. */
export interface PlannedSseEvent<Event extends { type: string }> {
  event: Event;
  delayMs: number;
  /** End the stream after this event (an in-band error), whatever was planned after it. */
  endsStream?: boolean;
}

/**
 * Answers 200 with the events of `plan`, each after its pause, recording each in `record.events` once written.
 * Stops quietly when the client goes away; with `dropAfterEvents`, destroys the connection after that many
 * events instead of ending the stream (a connection lost mid-answer).
 */
export async function writeEventStream<Event extends { type: string }>(
  exchange: ScriptedExchange<ScriptedRequestRecord<ScriptedAnswer, Event>>,
  headers: Record<string, string>,
  plan: Iterable<PlannedSseEvent<Event>>,
  dropAfterEvents?: number,
): Promise<void> {
  const { req, res, record, signal } = exchange;
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    ...headers,
  });
  res.flushHeaders();
  let written = 0;
  for (const planned of plan) {
    await pauseUnlessAborted(planned.delayMs, signal);
    if (signal.aborted || res.destroyed) return;
    const { event } = planned;
    await new Promise<void>((resolve) =>
      res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`, () => resolve()),
    );
    record.events.push(event);
    if (planned.endsStream) break;
    written++;
    if (dropAfterEvents !== undefined && written >= dropAfterEvents) {
      req.socket.destroy();
      return;
    }
  }
  res.end();
}
