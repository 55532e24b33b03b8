import type { SessionKey } from "../records/session-record.js";
import type { StoredDelta } from "../records/turn-event.js";

/**
 * The text deltas of streamed turns, kept so a client that dropped off can resume from `Last-Event-ID`
 * on any server instance. Results are not kept here: each round's result lives on its turn.
 */
export interface TurnEventLog {
  /**
   * Appends the deltas while `leaseOwner` holds the session's lease, and answers whether it did: an instance
   * that lost the lease (its turn reaped, its session deleted) writes nothing, so no delta outlives a delete.
   * A delta already stored (same round and seq) is kept as it was.
   */
  append(input: AppendTurnEventsInput): Promise<boolean>;
  /**
   * The deltas of `round`, in order, with `seq` greater than `afterSeq` (-1 for all): the first `limit` of them
   * when given, so that a reader holds a page of a long round at a time.
   */
  list(
    key: SessionKey,
    turnId: string,
    round: number,
    afterSeq: number,
    limit?: number,
  ): Promise<StoredDelta[]>;
  /**
   * Deletes every delta of up to `limit` turns that ended (`completedAt`, as the session store keeps it)
   * before `endedBefore`, and answers how many turns it pruned. A resumed stream of such a turn gets its
   * rounds' results only.
   */
  prune(input: PruneTurnEventsInput): Promise<number>;
  /**
   * Deletes every delta of a deleted session. A log that shares one database with the session store leaves it
   * out, since `SessionDirectory.deleteSession` deletes them in its own transaction.
   */
  deleteSession?(key: SessionKey): Promise<void>;
  /**
   * Calls `onChange` whenever any instance sharing this log appends deltas of a streamed turn or stores a
   * result of one of its rounds, until the answered `stop` is called. Optional: without it, followers hear of
   * their own instance's changes only, and poll for the rest.
   */
  listen?(onChange: (key: SessionKey, turnId: string) => void): Promise<() => Promise<void>>;
  /**
   * Calls `onCancel` whenever any instance sharing this log's database cancels a turn (its status becomes
   * `cancelled`), until the answered `stop` is called: how a cancel reaches the instance running the turn.
   * Optional: without it, a cancel aborts turns running on its own instance only (one process, PGlite).
   */
  listenCancels?(onCancel: (key: SessionKey, turnId: string) => void): Promise<() => Promise<void>>;
}

export interface AppendTurnEventsInput {
  key: SessionKey;
  turnId: string;
  /** The lease the round runs under (`SessionLease.owner`). */
  leaseOwner: string;
  deltas: readonly StoredDelta[];
}

export interface PruneTurnEventsInput {
  endedBefore: Date;
  limit: number;
}
