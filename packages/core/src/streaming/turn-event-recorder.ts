import type { TurnEventLog } from "../ports/turn-event-log.js";
import type { CompactedEvent, TextSink } from "../reasoner/answer-text.js";
import type { SessionKey } from "../records/session-record.js";
import {
  compactedDelta,
  deltaEvent,
  RESET_DELTA,
  type StoredDelta,
  type TurnEvent,
} from "../records/turn-event.js";
import type { TurnWakeups } from "./turn-wakeups.js";

export interface TurnEventRecorderOptions {
  log: TurnEventLog;
  wakeups: TurnWakeups;
  key: SessionKey;
  turnId: string;
  /** The lease the round runs under: deltas are kept only while it holds. */
  leaseOwner: string;
  round: number;
  /** The live stream. */
  onEvent: (event: TurnEvent) => void;
  /** How long deltas are buffered before they are written to the log. */
  flushMs: number;
  /** The seq of the round's first event: past those of an earlier attempt of the round, when it is run again. */
  firstSeq?: number;
}

/**
 * The text events of one streamed round: each goes to the live stream at once, and to the event log in
 * batches (one write per interval rather than per token) so a reconnecting client can catch up.
 */
export class TurnEventRecorder implements TextSink {
  readonly #options: TurnEventRecorderOptions;
  readonly #pending: StoredDelta[] = [];
  #seq: number;
  /** Whether text was shown since the last reset (an earlier attempt of the round may have shown some). */
  #shown: boolean;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  /** The lease was lost: nothing more is written (the round learns of it at its next write of its own). */
  #lost = false;

  constructor(options: TurnEventRecorderOptions) {
    this.#options = options;
    this.#seq = options.firstSeq ?? 0;
    this.#shown = this.#seq > 0;
  }

  delta(text: string): void {
    if (text === "") return;
    this.#shown = true;
    this.#record(text);
  }

  reset(): void {
    if (!this.#shown) return;
    this.#shown = false;
    this.#record(RESET_DELTA);
  }

  compacted(compaction: CompactedEvent): void {
    this.#keep(compactedDelta(this.#options.round, this.#seq++, compaction));
  }

  #record(delta: string): void {
    this.#keep({ round: this.#options.round, seq: this.#seq++, delta });
  }

  #keep(stored: StoredDelta): void {
    this.#options.onEvent(deltaEvent(stored));
    this.#pending.push(stored);
    this.#timer ??= setTimeout(() => void this.flush(), this.#options.flushMs);
  }

  /** Writes what is buffered. Resuming is best effort: a failed write loses deltas, never the turn. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending.splice(0);
    if (batch.length > 0 && !this.#lost) {
      const { log, key, turnId, leaseOwner, wakeups } = this.#options;
      this.#writing = this.#writing
        .then(() => (this.#lost ? false : log.append({ key, turnId, leaseOwner, deltas: batch })))
        .then(
          (appended) => {
            if (appended) wakeups.notify(key, turnId);
            else this.#lost = true;
          },
          () => undefined,
        );
    }
    return this.#writing;
  }
}
