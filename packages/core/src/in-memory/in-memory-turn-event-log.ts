import type { SessionStore } from "../ports/session-store.js";
import type { PruneTurnEventsInput, TurnEventLog } from "../ports/turn-event-log.js";
import type { SessionKey } from "../records/session-record.js";
import type { StoredDelta } from "../records/turn-event.js";

export class InMemoryTurnEventLog implements TurnEventLog {
  readonly #deltas = new Map<string, { key: SessionKey; turnId: string; deltas: StoredDelta[] }>();
  readonly #turns: Pick<SessionStore, "getTurn"> | undefined;

  /** `turns` tells `prune` when a turn ended; without it nothing is ever pruned. */
  constructor(turns?: Pick<SessionStore, "getTurn">) {
    this.#turns = turns;
  }

  async append(key: SessionKey, turnId: string, deltas: readonly StoredDelta[]): Promise<void> {
    const name = nameOf(key, turnId);
    const kept = this.#deltas.get(name) ?? {
      key: { principal: key.principal, sessionId: key.sessionId },
      turnId,
      deltas: [],
    };
    kept.deltas.push(...deltas.map((delta) => ({ ...delta })));
    this.#deltas.set(name, kept);
  }

  async list(key: SessionKey, turnId: string, round: number, afterSeq: number): Promise<StoredDelta[]> {
    const kept = this.#deltas.get(nameOf(key, turnId))?.deltas ?? [];
    return kept
      .filter((delta) => delta.round === round && delta.seq > afterSeq)
      .sort((a, b) => a.seq - b.seq)
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
