import type { SessionKey } from "../records/session-record.js";

/**
 * Wakes followers of a turn on this instance when its events or state change, so they need not wait for
 * their next poll. Followers still poll: another instance may be running the turn.
 */
export class TurnWakeups {
  readonly #waiting = new Map<string, Set<() => void>>();

  notify(key: SessionKey, turnId: string): void {
    const name = nameOf(key, turnId);
    const waiting = this.#waiting.get(name);
    this.#waiting.delete(name);
    for (const wake of waiting ?? []) wake();
  }

  /** Resolves at the next notify for the turn, after `ms`, or when `signal` aborts, whichever comes first. */
  wait(key: SessionKey, turnId: string, ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    const name = nameOf(key, turnId);
    return new Promise((resolve) => {
      const waiting = this.#waiting.get(name) ?? new Set();
      const wake = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", wake);
        waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      signal?.addEventListener("abort", wake, { once: true });
      waiting.add(wake);
      this.#waiting.set(name, waiting);
    });
  }
}

function nameOf(key: SessionKey, turnId: string): string {
  return JSON.stringify([key.principal, key.sessionId, turnId]);
}
