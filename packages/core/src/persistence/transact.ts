import type { InvokeResult } from "@aptix/contracts";
import type { DeleteSessionResult } from "../ports/session-directory.js";
import type { SessionKey, SessionRecord } from "../records/session-record.js";
import type { SessionLease, TurnChange, TurnPersistence } from "./turn-persistence.js";

/** A claim's writes without the session they are of, which `transact` adds (one member of the union at a time). */
export type UnkeyedChange = TurnChange extends infer C
  ? C extends TurnChange
    ? Omit<C, "key">
    : never
  : never;

/**
 * What one attempt of `transact` decided from what it read:
 * - `answer`: nothing to write; the answer as it is (a refusal, a stored answer, nothing to do).
 * - `apply`: a transition applied with a new lease of the session (`TurnPersistence.apply`); `applied` goes on
 *   under that lease, which it must settle or release.
 * - `delete`: the session deleted with everything of it (`remove`: `SessionDirectory.deleteSession`, guarded by
 *   the version read); `deleted` tells whatever keeps things of the session apart from the store.
 * - `copy`: a session made from another (`copy`: `SessionDirectory.forkSession`, guarded by the source's version
 *   read); `copied` answers.
 * Each write is guarded by what that attempt read (the session's `version`, or that it does not exist yet), so it
 * applies only while the session is as read. `busy` answers when another owner holds the
 * session's lease.
 */
export type Decision<R> =
  | { type: "answer"; answer: InvokeResult<R> }
  | {
      type: "apply";
      change: UnkeyedChange;
      /** Starts or resumes a running turn: the principal's running-turn cap applies (refused RATE_LIMITED). */
      runsTurn?: boolean;
      busy: InvokeResult<R>;
      applied: (claim: { session: SessionRecord; lease: SessionLease }) => Promise<InvokeResult<R>>;
    }
  | {
      type: "delete";
      remove: () => Promise<DeleteSessionResult>;
      busy: InvokeResult<R>;
      deleted: () => Promise<InvokeResult<R>>;
    }
  | {
      type: "copy";
      copy: () => Promise<"forked" | "stale">;
      copied: () => Promise<InvokeResult<R>>;
    };

export interface TransactOptions<R> {
  persistence: TurnPersistence;
  /** The session every write of the transaction is of. */
  key: SessionKey;
  /**
   * Reads what it decides from, afresh on every attempt, and decides: it may read more (a budget's spend) but
   * writes nothing, so an attempt that lost its race leaves no trace.
   */
  decide: () => Promise<Decision<R>>;
  /** How many times it reads and decides at most, the first included. */
  attempts: number;
  /** The answer once every attempt found the session changed between its read and its write. */
  lostRace: InvokeResult<R>;
}

/**
 * The one way a session's state changes from outside a running round: read → decide → write guarded by what
 * was read; when the session changed in between (`stale`: another request, a round's write, a racing identical
 * request), nothing was written and it reads and decides again, `attempts` times at most. Admission, cancel,
 * compaction, deletion, the reaper, a rewind and a fork go through it; a new way of changing a session is one
 * more `decide`. A round's own writes are guarded by its lease instead (`SessionLease`).
 */
export async function transact<R>(options: TransactOptions<R>): Promise<InvokeResult<R>> {
  for (let attempt = 0; attempt < options.attempts; attempt++) {
    const decision = await options.decide();
    if (decision.type === "answer") return decision.answer;
    const written = await write(options, decision);
    if (written !== "stale") return written;
  }
  return options.lostRace;
}

/** Makes the decided write, guarded: `stale` when the session changed since the read, and nothing was written. */
async function write<R>(
  { persistence, key }: TransactOptions<R>,
  decision: Exclude<Decision<R>, { type: "answer" }>,
): Promise<InvokeResult<R> | "stale"> {
  if (decision.type === "copy") return (await decision.copy()) === "forked" ? decision.copied() : "stale";
  if (decision.type === "delete") {
    const outcome = await decision.remove();
    if (outcome === "deleted") return decision.deleted();
    return outcome === "busy" ? decision.busy : outcome;
  }
  const applied = await persistence.apply({ ...decision.change, key }, decision.runsTurn ?? false);
  switch (applied.outcome) {
    case "applied":
      return decision.applied(applied);
    case "busy":
      return decision.busy;
    case "refused":
      return applied.failure;
    case "stale":
      return "stale";
  }
}
