import type { SessionKey } from "../model/session-record.js";
import type { StoredDelta } from "../model/turn-event.js";
import type { TurnEventLog } from "../ports/turn-event-log.js";

export class InMemoryTurnEventLog implements TurnEventLog {
  readonly #deltas = new Map<string, StoredDelta[]>();

  async append(key: SessionKey, turnId: string, deltas: readonly StoredDelta[]): Promise<void> {
    const name = JSON.stringify([key.principal, key.sessionId, turnId]);
    const kept = this.#deltas.get(name) ?? [];
    kept.push(...deltas.map((delta) => ({ ...delta })));
    this.#deltas.set(name, kept);
  }

  async list(key: SessionKey, turnId: string, round: number, afterSeq: number): Promise<StoredDelta[]> {
    const kept = this.#deltas.get(JSON.stringify([key.principal, key.sessionId, turnId])) ?? [];
    return kept
      .filter((delta) => delta.round === round && delta.seq > afterSeq)
      .sort((a, b) => a.seq - b.seq)
      .map((delta) => ({ ...delta }));
  }
}
