import { fail, type InvokeResult, ok } from "@aptix/contracts";
import type { TurnPersistence } from "../persistence/turn-persistence.js";
import type { TurnEventLog } from "../ports/turn-event-log.js";
import type { SessionKey } from "../records/session-record.js";
import { deltaEvent, parseEventId, resultEvent, type TurnEvent } from "../records/turn-event.js";
import type { TurnRecord } from "../records/turn-record.js";
import { SharedTurnReads } from "./shared-turn-reads.js";
import type { TurnWakeups } from "./turn-wakeups.js";

/** Where following starts: the deltas of `round` after `afterSeq` and on from there, or one result sent again. */
type FollowStart = { round: number; afterSeq: number } | { again: TurnEvent };

/**
 * Follows a turn for a client that dropped off its stream: the events after a position, then live until the
 * latest round has its result. Works from any instance: it reads the store again whenever the turn changes
 * (TurnWakeups), and every `pollMs` in case a change goes untold.
 */
export interface TurnFollowerOptions {
  persistence: TurnPersistence;
  events: TurnEventLog;
  wakeups: TurnWakeups;
  /** How often a followed turn is read again when no change was told meanwhile. */
  pollMs: number;
}

export class TurnFollower {
  private readonly persistence: TurnPersistence;
  private readonly events: TurnEventLog;
  private readonly wakeups: TurnWakeups;
  private readonly pollMs: number;
  readonly #reads: SharedTurnReads;
  #listen: Promise<unknown> | undefined;

  constructor(options: TurnFollowerOptions) {
    ({
      persistence: this.persistence,
      events: this.events,
      wakeups: this.wakeups,
      pollMs: this.pollMs,
    } = options);
    this.#reads = new SharedTurnReads(this.persistence, this.events);
  }

  /**
   * The events of `turn` after `lastEventId` (from its first without one), ending with the turn's latest
   * result, or VALIDATION_FAILED naming the Last-Event-ID header when the id names no event of the turn.
   * Ends early once `signal` aborts: following costs polls, and nobody listens any more.
   */
  resume(
    key: SessionKey,
    turn: TurnRecord,
    lastEventId: string | undefined,
    signal?: AbortSignal,
  ): InvokeResult<AsyncIterable<TurnEvent>> {
    const start = lastEventId === undefined ? { round: 0, afterSeq: -1 } : startAfter(turn, lastEventId);
    if (typeof start === "string") {
      return fail("VALIDATION_FAILED", `Last-Event-ID ${start}.`, {
        fields: [{ path: "Last-Event-ID", message: start }],
      });
    }
    return ok(this.#follow(key, turn.turnId, start, signal));
  }

  async *#follow(key: SessionKey, turnId: string, start: FollowStart, signal?: AbortSignal) {
    if ("again" in start) {
      yield start.again;
      return;
    }
    await this.#listening();
    // Watched before the first read: a change made while reading ends the next wait at once.
    const watch = this.wakeups.watch(key, turnId);
    try {
      let { round, afterSeq } = start;
      while (!signal?.aborted) {
        // Read with the other followers of the round that the same change woke.
        const { turn, deltas, more } = await this.#reads.read(key, turnId, round, afterSeq);
        if (!turn || round >= turn.rounds.length) return;
        // Taken one at a time by the stream, which takes the next once its client has room: a client that does
        // not read holds this page here, and no read more.
        for (const delta of deltas) {
          afterSeq = delta.seq;
          yield deltaEvent(delta);
        }
        // The rest of a long round is read before its result, and without waiting for a change.
        if (more) continue;
        // Deltas reach the log before their round's result reaches the turn, so none is missed here.
        const result = turn.rounds[round]?.result;
        if (result) {
          yield resultEvent(round, result);
          round += 1;
          afterSeq = -1;
        } else {
          await watch.wait(this.pollMs, signal);
        }
      }
    } finally {
      watch.close();
    }
  }

  /**
   * Hears of other instances' changes through the event log, from the first follower on, when the log can tell
   * them; a log that cannot (or fails to start listening) leaves followers to this instance's changes and polls.
   */
  #listening(): Promise<unknown> {
    this.#listen ??= this.events.listen
      ? this.events
          .listen((key, turnId) => this.wakeups.notify(key, turnId))
          .catch(() => {
            this.#listen = undefined;
          })
      : Promise.resolve();
    return this.#listen;
  }
}

/**
 * Where following resumes after the event `lastEventId`, or why that id names no event of `turn`. A delta id
 * is judged by its round alone: a running round's deltas reach the log in batches, after the client saw them,
 * and an ended turn's are pruned. After the latest result, that result is sent again: it is the turn's
 * authoritative end, so a resume always ends with it.
 */
function startAfter(turn: TurnRecord, lastEventId: string): FollowStart | string {
  const position = parseEventId(lastEventId);
  if (!position) return "is not an event id of this service";
  const round = turn.rounds[position.round];
  if (!round) return `names round ${position.round}, but the turn's last round is ${turn.rounds.length - 1}`;
  if (!("result" in position)) return { round: position.round, afterSeq: position.seq };
  if (!round.result) return `names the result of round ${position.round}, which has none yet`;
  if (position.round < turn.rounds.length - 1) return { round: position.round + 1, afterSeq: -1 };
  return { again: resultEvent(position.round, round.result) };
}
