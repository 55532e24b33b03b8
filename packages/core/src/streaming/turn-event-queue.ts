import type { TurnEvent } from "../records/turn-event.js";

/**
 * The events of a running round as an AsyncIterable: the round pushes them as they come, one reader takes
 * them in order. A reader that stops early only stops reading; the round runs on (its events are logged).
 */
export class TurnEventQueue implements AsyncIterable<TurnEvent> {
  readonly #events: TurnEvent[] = [];
  #ended = false;
  #failure: { error: unknown } | undefined;
  #wake: (() => void) | undefined;

  push(event: TurnEvent): void {
    if (this.#ended) return;
    this.#events.push(event);
    this.#wakeReader();
  }

  /** No more events; with `error`, the reader gets it after the events already pushed. */
  end(failure?: { error: unknown }): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#failure = failure;
    this.#wakeReader();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TurnEvent> {
    try {
      for (;;) {
        const next = this.#events.shift();
        if (next) {
          yield next;
        } else if (this.#ended) {
          if (this.#failure) throw this.#failure.error;
          return;
        } else {
          await new Promise<void>((resolve) => {
            this.#wake = resolve;
          });
        }
      }
    } finally {
      // Nobody reads any more: later events would only pile up here.
      this.#ended = true;
      this.#events.length = 0;
    }
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
