import type { TurnPersistence } from "../persistence/turn-persistence.js";
import type { TurnEventLog } from "../ports/turn-event-log.js";
import type { SessionKey } from "../records/session-record.js";
import type { StoredDelta } from "../records/turn-event.js";
import type { TurnRecord } from "../records/turn-record.js";

/**
 * The most deltas one read takes: a follower holds a page at a time, and reads the next once it has sent this
 * one, so a long round's replay is never held whole, and a client that does not read stops its reads.
 */
export const FOLLOW_PAGE_DELTAS = 256;

/** What a follower reads of its turn: the turn, and a page of the deltas of its round after its position. */
export interface TurnRead {
  turn: TurnRecord | undefined;
  deltas: StoredDelta[];
  /** The page was full: more deltas may follow it, to be read before the round's result. */
  more: boolean;
}

/**
 * The reads of a turn's followers on this instance, shared: the followers of one round that ask before the read
 * starts (all those one change woke) get one read of the turn and one of its deltas between them, from the
 * earliest position among them, each keeping what lies after its own. So a turn followed by many clients costs
 * the store two statements a change, not two a client, and its rows are held once. A read takes a page of the
 * deltas (`FOLLOW_PAGE_DELTAS`): a follower ahead of the page's start may find none of its own in it, and reads
 * again at once.
 */
export class SharedTurnReads {
  readonly #waiting = new Map<string, { afterSeq: number; read: Promise<TurnRead> }>();

  constructor(
    private readonly persistence: Pick<TurnPersistence, "getTurn">,
    private readonly events: Pick<TurnEventLog, "list">,
  ) {}

  async read(key: SessionKey, turnId: string, round: number, afterSeq: number): Promise<TurnRead> {
    const name = JSON.stringify([key.principal, key.sessionId, turnId, round]);
    let waiting = this.#waiting.get(name);
    if (waiting) {
      waiting.afterSeq = Math.min(waiting.afterSeq, afterSeq);
    } else {
      const started = {
        afterSeq,
        read: Promise.resolve<TurnRead>({ turn: undefined, deltas: [], more: false }),
      };
      // Starts once the followers woken with this one have asked too (they run before the next macrotask).
      started.read = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        this.#waiting.delete(name);
        const turn = await this.persistence.getTurn(key, turnId);
        if (!turn || round >= turn.rounds.length) return { turn, deltas: [], more: false };
        const deltas = await this.events.list(key, turnId, round, started.afterSeq, FOLLOW_PAGE_DELTAS);
        return { turn, deltas, more: deltas.length === FOLLOW_PAGE_DELTAS };
      });
      waiting = started;
      this.#waiting.set(name, waiting);
    }
    const { turn, deltas, more } = await waiting.read;
    return { turn, deltas: deltas.filter((delta) => delta.seq > afterSeq), more };
  }
}
