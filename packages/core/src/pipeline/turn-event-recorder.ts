import type { SessionKey } from "../model/session-record.js";
import { deltaEvent, type StoredDelta, type TurnEvent } from "../model/turn-event.js";
import type { TurnEventLog } from "../ports/turn-event-log.js";
import type { TurnWakeups } from "./turn-wakeups.js";

/**
 * The text deltas of one streamed round: each goes to the live stream at once, and to the event log in
 * batches (one write per interval rather than per token) so a reconnecting client can catch up.
 */
export class TurnEventRecorder {
  readonly #pending: StoredDelta[] = [];
  #seq = 0;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly log: TurnEventLog,
    private readonly wakeups: TurnWakeups,
    private readonly key: SessionKey,
    private readonly turnId: string,
    private readonly round: number,
    private readonly onEvent: (event: TurnEvent) => void,
    private readonly flushMs: number,
  ) {}

  delta(text: string): void {
    if (text === "") return;
    const stored = { round: this.round, seq: this.#seq++, delta: text };
    this.onEvent(deltaEvent(stored));
    this.#pending.push(stored);
    this.#timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Writes what is buffered. Resuming is best effort: a failed write loses deltas, never the turn. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending.splice(0);
    if (batch.length > 0) {
      this.#writing = this.#writing
        .then(() => this.log.append(this.key, this.turnId, batch))
        .then(
          () => this.wakeups.notify(this.key, this.turnId),
          () => undefined,
        );
    }
    return this.#writing;
  }
}
