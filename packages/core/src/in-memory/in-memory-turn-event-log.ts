import type { AppendTurnEventsInput, PruneTurnEventsInput, TurnEventLog } from "../ports/turn-event-log.js";
import type { TurnStore } from "../ports/turn-store.js";
import type { SessionKey } from "../records/session-record.js";
import type { StoredDelta } from "../records/turn-event.js";

/** The turn store beside the log. */
type SessionsOfTheLog = Pick<TurnStore, "getTurn"> & {
  holdsLease?(key: SessionKey, owner: string): boolean;
};

export class InMemoryTurnEventLog implements TurnEventLog {
  readonly #deltas = new Map<string, { key: SessionKey; turnId: string; deltas: StoredDelta[] }>();
  readonly #turns: SessionsOfTheLog | undefined;

  /**
   * `turns` tells `prune` when a turn ended (without it nothing is ever pruned), and `append` whether a lease
   * is held when it can (`InMemoryTurnStore.holdsLease`; without it every append is kept).
   */
  constructor(turns?: SessionsOfTheLog) {
    this.#turns = turns;
  }

  async append({ key, turnId, leaseOwner, deltas }: AppendTurnEventsInput): Promise<boolean> {
    if (this.#turns?.holdsLease?.(key, leaseOwner) === false) return false;
    const name = nameOf(key, turnId);
    const kept = this.#deltas.get(name) ?? {
      key: { principal: key.principal, sessionId: key.sessionId },
      turnId,
      deltas: [],
    };
    const stored = new Set(kept.deltas.map((delta) => `${delta.round}:${delta.seq}`));
    kept.deltas.push(
      ...deltas.filter((delta) => !stored.has(`${delta.round}:${delta.seq}`)).map((delta) => ({ ...delta })),
    );
    this.#deltas.set(name, kept);
    return true;
  }

  async list(
    key: SessionKey,
    turnId: string,
    round: number,
    afterSeq: number,
    limit?: number,
  ): Promise<StoredDelta[]> {
    const kept = this.#deltas.get(nameOf(key, turnId))?.deltas ?? [];
    return kept
      .filter((delta) => delta.round === round && delta.seq > afterSeq)
      .sort((a, b) => a.seq - b.seq)
      .slice(0, limit)
      .map((delta) => ({ ...delta }));
  }

  async deleteSession(key: SessionKey): Promise<void> {
    for (const [name, kept] of [...this.#deltas]) {
      if (kept.key.principal === key.principal && kept.key.sessionId === key.sessionId)
        this.#deltas.delete(name);
    }
  }

  async prune({ endedBefore, limit }: PruneTurnEventsInput): Promise<number> {
    let pruned = 0;
    for (const [name, { key, turnId }] of [...this.#deltas]) {
      if (pruned >= limit || this.#turns === undefined) break;
      const completedAt = (await this.#turns.getTurn(key, turnId))?.completedAt;
      if (completedAt && completedAt.getTime() < endedBefore.getTime()) {
        this.#deltas.delete(name);
        pruned++;
      }
    }
    return pruned;
  }
}

/** JSON of the triple, so no principal, session id or turn id can collide with another through a separator. */
function nameOf(key: SessionKey, turnId: string): string {
  return JSON.stringify([key.principal, key.sessionId, turnId]);
}
