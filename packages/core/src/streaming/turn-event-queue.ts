import type { TurnEvent } from "../records/turn-event.js";

/** The events a running round's reader may leave unread before the rest are read from the event log instead. */
export const MAX_QUEUED_EVENTS = 1_024;

export interface TurnEventQueueOptions {
  /**
   * The round's events after the event `lastEventId` (the round's first without one), from the event log: what a
   * reader that fell `MAX_QUEUED_EVENTS` behind reads from then on.
   */
  catchUp: (lastEventId: string | undefined) => AsyncIterable<TurnEvent>;
}

/**
 * The events of a running round as an AsyncIterable: the round pushes them as they come, one reader takes
 * them in order. A reader that stops early only stops reading; the round runs on (its events are logged). A
 * reader that falls `MAX_QUEUED_EVENTS` behind (its client reads slower than the model writes) has the queue
 * dropped and goes on from the event log where it stood, so a slow client never has the round held here.
 */
export class TurnEventQueue implements AsyncIterable<TurnEvent> {
  readonly #options: TurnEventQueueOptions;
  readonly #events: TurnEvent[] = [];
  #ended = false;
  #behind = false;
  #failure: { error: unknown } | undefined;
  #wake: (() => void) | undefined;

  constructor(options: TurnEventQueueOptions) {
    this.#options = options;
  }

  push(event: TurnEvent): void {
    if (this.#ended || this.#behind) return;
    if (this.#events.length >= MAX_QUEUED_EVENTS) {
      this.#behind = true;
      this.#events.length = 0;
    } else {
      this.#events.push(event);
    }
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
    let lastEventId: string | undefined;
    try {
      for (;;) {
        const next = this.#events.shift();
        if (next) {
          lastEventId = next.id;
          yield next;
        } else if (this.#behind) {
          yield* this.#options.catchUp(lastEventId);
          return;
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
