import type { SessionKey } from "../model/session-record.js";
import type { StoredDelta } from "../model/turn-event.js";

/**
 * The text deltas of streamed turns, kept so a client that dropped off can resume from `Last-Event-ID`
 * on any server instance. Results are not kept here: each round's result lives on its turn.
 */
export interface TurnEventLog {
  append(key: SessionKey, turnId: string, deltas: readonly StoredDelta[]): Promise<void>;
  /** The deltas of `round`, in order, with `seq` greater than `afterSeq` (-1 for all). */
  list(key: SessionKey, turnId: string, round: number, afterSeq: number): Promise<StoredDelta[]>;
}
