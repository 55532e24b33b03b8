import type { SessionKey } from "../model/session-record.js";
import { deltaEvent, type EventPosition, resultEvent, type TurnEvent } from "../model/turn-event.js";
import type { TurnEventLog } from "../ports/turn-event-log.js";
import type { TurnPersistence } from "./turn-persistence.js";
import type { TurnWakeups } from "./turn-wakeups.js";

/**
 * Follows a turn for a client that dropped off its stream: the events after a position, then live until the
 * latest round has its result. Works from any instance: it reads the store and polls while the turn runs.
 */
export class TurnFollower {
  constructor(
    private readonly persistence: TurnPersistence,
    private readonly events: TurnEventLog,
    private readonly wakeups: TurnWakeups,
    private readonly pollMs: number,
  ) {}

  /** Ends early once `signal` aborts: following costs polls, and nobody listens any more. */
  async *follow(
    key: SessionKey,
    turnId: string,
    position: EventPosition | undefined,
    signal?: AbortSignal,
  ): AsyncIterable<TurnEvent> {
    let round = position?.round ?? 0;
    let afterSeq = position && "seq" in position ? position.seq : -1;
    if (position && "result" in position) round += 1;
    while (!signal?.aborted) {
      const turn = await this.persistence.getTurn(key, turnId);
      if (!turn || round >= turn.rounds.length) return;
      // Deltas reach the log before their round's result reaches the turn, so none is missed here.
      for (const delta of await this.events.list(key, turnId, round, afterSeq)) {
        afterSeq = delta.seq;
        yield deltaEvent(delta);
      }
      const result = turn.rounds[round]?.result;
      if (result) {
        yield resultEvent(round, result);
        round += 1;
        afterSeq = -1;
      } else {
        await this.wakeups.wait(key, turnId, this.pollMs, signal);
      }
    }
  }
}
