import type { TurnEventLog } from "../ports/turn-event-log.js";
import type { SessionKey } from "../records/session-record.js";

/** A round running on this instance: its signal aborts when its turn is cancelled. */
export interface RunningTurn {
  signal: AbortSignal;
  /** The round has ended: a cancel no longer concerns this instance. */
  done(): void;
}

/**
 * The rounds running on this instance, by turn, and the signals that stop them when their turn is cancelled:
 * by a cancel this instance applied, or one another instance applied, which the event log tells of
 * (`TurnEventLog.listenCancels`, Postgres `LISTEN`/`NOTIFY`), listened to from the start.
 */
export class TurnCancels {
  readonly #running = new Map<string, AbortController>();
  readonly #events: TurnEventLog;
  #listen: Promise<unknown> | undefined;

  /** Starts listening at once: the first round need not wait for it, nor count it among its statements. */
  constructor(events: TurnEventLog) {
    this.#events = events;
    void this.#listening();
  }

  async start(key: SessionKey, turnId: string): Promise<RunningTurn> {
    await this.#listening();
    const name = nameOf(key, turnId);
    const controller = new AbortController();
    this.#running.set(name, controller);
    return {
      signal: controller.signal,
      done: () => {
        if (this.#running.get(name) === controller) this.#running.delete(name);
      },
    };
  }

  /** Aborts the turn's round when it runs on this instance. */
  cancel(key: SessionKey, turnId: string): void {
    this.#running.get(nameOf(key, turnId))?.abort(new Error("The turn was cancelled."));
  }

  /** A log that cannot tell of cancels (or fails to start listening) leaves cancels to this instance. */
  #listening(): Promise<unknown> {
    this.#listen ??= this.#events.listenCancels
      ? this.#events
          .listenCancels((key, turnId) => this.cancel(key, turnId))
          .catch(() => {
            this.#listen = undefined;
          })
      : Promise.resolve();
    return this.#listen;
  }
}

function nameOf(key: SessionKey, turnId: string): string {
  return JSON.stringify([key.principal, key.sessionId, turnId]);
}
