import type { SessionKey } from "../records/session-record.js";

/**
 * Wakes followers of a turn when its events or state change, so they need not wait for their next poll: this
 * instance's own changes, and other instances' when the event log tells of them (`TurnEventLog.listen`).
 * Followers still poll, slowly, in case a change goes untold.
 */
export class TurnWakeups {
  readonly #watches = new Map<string, Set<TurnWatch>>();

  notify(key: SessionKey, turnId: string): void {
    for (const watch of this.#watches.get(nameOf(key, turnId)) ?? []) watch.wake();
  }

  /** Starts watching a turn: a change told from now on ends the watch's next wait, even one not begun yet. */
  watch(key: SessionKey, turnId: string): TurnWatch {
    const name = nameOf(key, turnId);
    const watches = this.#watches.get(name) ?? new Set();
    this.#watches.set(name, watches);
    const watch = new TurnWatch(() => {
      watches.delete(watch);
      if (watches.size === 0 && this.#watches.get(name) === watches) this.#watches.delete(name);
    });
    watches.add(watch);
    return watch;
  }
}

/** One follower's watch of a turn (see `TurnWakeups.watch`); `close` it when done. */
export class TurnWatch {
  #told = false;
  #wake: (() => void) | undefined;

  constructor(readonly close: () => void) {}

  wake(): void {
    if (this.#wake) this.#wake();
    else this.#told = true;
  }

  /** Resolves once a change is told (at once if one was since the last wait), after `ms`, or when `signal` aborts. */
  wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#told || signal?.aborted) {
      this.#told = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
      this.#wake = done;
    });
  }
}

function nameOf(key: SessionKey, turnId: string): string {
  return JSON.stringify([key.principal, key.sessionId, turnId]);
}
