/** How both scripted servers cut a reply into stream events. */
import type { PlannedSseEvent } from "./sse-writer.js";

/** The events of a stream in the making: each delta but the first waits the reply's `chunkDelayMs`. */
export class StreamPlan<Event extends { type: string }> {
  readonly events: PlannedSseEvent<Event>[] = [];
  #deltas = 0;

  constructor(private readonly chunkDelayMs = 0) {}

  push(event: Event, isDelta = false): void {
    this.events.push({ event, delayMs: isDelta && this.#deltas++ > 0 ? this.chunkDelayMs : 0 });
  }
}

/** A text streamed one word (with its surrounding white space) a delta. */
export function wordChunks(text: string): string[] {
  return text.match(/\s*\S+\s*|\s+/g) ?? [];
}

/** JSON text (tool arguments) streamed in 24-character pieces. */
export function jsonChunks(json: string): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < json.length; i += 24) chunks.push(json.slice(i, i + 24));
  return chunks;
}

/** A scripted text: an array (the stream's deltas) joined. */
export function joinedText(text: string | string[] | undefined): string | undefined {
  return Array.isArray(text) ? text.join("") : text;
}
