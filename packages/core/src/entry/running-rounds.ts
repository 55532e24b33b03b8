import type { TurnEventLog } from "../ports/turn-event-log.js";
import type { TurnStore } from "../ports/turn-store.js";
import type { SessionKey, TurnKey } from "../records/session-record.js";

/** A round running on this instance: its signal aborts when its turn is cancelled. */
export interface RunningTurn {
  signal: AbortSignal;
  /** The round has ended: a cancel no longer concerns this instance. */
  done(): void;
}

/** How often the rounds running on an instance read whether their turns still run, when unset. */
const DEFAULT_CANCEL_POLL_MS = 2_000;

export interface RunningRoundsOptions {
  events: TurnEventLog;
  /** Where the poll reads which turns still run. */
  turns: Pick<TurnStore, "runningAmong">;
  /** How often it reads; default DEFAULT_CANCEL_POLL_MS. */
  pollMs?: number;
}

/**
 * The rounds running on this instance, by turn, and the signals that stop them when their turn is cancelled:
 * by a cancel this instance applied, or one another instance applied, which the event log tells of
 * (`TurnEventLog.listenCancels`, Postgres `LISTEN`/`NOTIFY`), listened to from the start. A notification can be
 * lost (the `LISTEN` connection dropped, PgBouncer between), so the running rounds also read, all in one query
 * every `pollMs`, whether their turns still run: a round whose turn was cancelled, ended by another instance or
 * deleted stops within a poll.
 */
export class RunningRounds {
  readonly #running = new Map<string, { key: TurnKey; controller: AbortController }>();
  readonly #events: TurnEventLog;
  readonly #turns: Pick<TurnStore, "runningAmong">;
  readonly #pollMs: number;
  #listen: Promise<unknown> | undefined;
  #poll: ReturnType<typeof setInterval> | undefined;
  #polling = false;

  /** Starts listening at once: the first round need not wait for it, nor count it among its statements. */
  constructor(options: RunningRoundsOptions) {
    this.#events = options.events;
    this.#turns = options.turns;
    this.#pollMs = options.pollMs ?? DEFAULT_CANCEL_POLL_MS;
    void this.#listening();
  }

  async start(key: SessionKey, turnId: string): Promise<RunningTurn> {
    await this.#listening();
    const name = nameOf(key, turnId);
    const controller = new AbortController();
    this.#running.set(name, {
      key: { principal: key.principal, sessionId: key.sessionId, turnId },
      controller,
    });
    this.#poll ??= setInterval(() => void this.#check(), this.#pollMs).unref();
    return {
      signal: controller.signal,
      done: () => {
        if (this.#running.get(name)?.controller === controller) this.#running.delete(name);
        if (this.#running.size === 0) this.#stopPolling();
      },
    };
  }

  /** Aborts the turn's round when it runs on this instance. */
  cancel(key: SessionKey, turnId: string): void {
    this.#running.get(nameOf(key, turnId))?.controller.abort(new Error("The turn was cancelled."));
  }

  /** One read for every round running here; a turn no longer running stops its round. */
  async #check(): Promise<void> {
    if (this.#polling || this.#running.size === 0) return;
    this.#polling = true;
    try {
      const running = [...this.#running.values()];
      const still = new Set((await this.#turns.runningAmong(running.map(({ key }) => key))).map(nameOfTurn));
      for (const { key, controller } of running) {
        if (!still.has(nameOfTurn(key))) controller.abort(new Error("The turn is no longer running."));
      }
    } catch {
      // The database is out of reach: the rounds find out at their own next write; the next poll tries again.
    } finally {
      this.#polling = false;
    }
  }

  #stopPolling(): void {
    clearInterval(this.#poll);
    this.#poll = undefined;
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

function nameOfTurn(key: TurnKey): string {
  return nameOf(key, key.turnId);
}
