import type { InvokeResult } from "@aptix/contracts";
import { type Decision, transact } from "../persistence/transact.js";
import type { TurnPersistence } from "../persistence/turn-persistence.js";
import type { SessionKey } from "../records/session-record.js";
import { sessionBusy } from "./entry-failures.js";

/** Reads that find the session changed between their read and the write before the request answers busy. */
const SESSION_ATTEMPTS = 3;

/**
 * `transact` as the requests on a whole session take it (a fork, a rewind, a deletion, a compaction): a few
 * attempts, then SESSION_BUSY, as when a turn of the session runs.
 */
export function transactSession<R>(
  persistence: TurnPersistence,
  key: SessionKey,
  decide: () => Promise<Decision<R>>,
): Promise<InvokeResult<R>> {
  return transact({
    persistence,
    key,
    attempts: SESSION_ATTEMPTS,
    lostRace: sessionBusy(key.sessionId),
    decide,
  });
}
