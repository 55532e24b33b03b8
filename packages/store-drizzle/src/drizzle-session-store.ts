import {
  type Clock,
  type CompactionRecord,
  type DeleteSessionInput,
  type DeleteSessionResult,
  type FindExpiredLeasesInput,
  type FindIdleSessionsInput,
  type FinishResponseDeletionsInput,
  type ListSessionsInput,
  type LlmCallRecord,
  type MessageTurn,
  type ModeHistoryEntry,
  type PruneTracesInput,
  type RecordLlmCallInput,
  type ResponseDeletion,
  type SessionKey,
  type SessionListing,
  type SessionRecord,
  type SessionStore,
  type SumSessionUsageInput,
  type SumUsageInput,
  systemClock,
  type TakeResponseDeletionsInput,
  type TranscriptItem,
  type TransitionResult,
  type TransitionWrite,
  type TurnKey,
  type TurnRecord,
  type TurnState,
  type UsageEntry,
  type UsageSum,
} from "@aptix/core";
import { LeaseClock } from "./domains/lease.js";
import type { StoreDatabase } from "./domains/rows.js";
import { SessionDirectory } from "./domains/session-directory.js";
import { SessionsAndTurns } from "./domains/sessions-and-turns.js";
import { TranscriptAndTraces } from "./domains/transcript-and-traces.js";
import { TurnTransitions } from "./domains/turn-transitions.js";
import { UsageSums } from "./domains/usage-sums.js";

export type { StoreDatabase } from "./domains/rows.js";

/**
 * A `SessionStore` on drizzle-orm, with the semantics of core's `InMemorySessionStore` (checked by
 * `describeSessionStoreContract`), safe for many server instances sharing one database. It delegates to its
 * domains (`src/domains/`): turn transitions (the read a request is decided from, and the one write that applies
 * the decision), sessions and turns, and transcript and traces. Leases are judged by the database's clock
 * (`LeaseClock`), and every lease-guarded write is one statement whose first part writes the session row
 * (bumping its `version`) while the lease is held, its other parts writing only then, so a claim racing it waits
 * for its commit; each call sends a fixed number of statements whatever the session's length.
 */
export class DrizzleSessionStore implements SessionStore {
  readonly #sessions: SessionsAndTurns;
  readonly #transitions: TurnTransitions;
  readonly #traces: TranscriptAndTraces;
  readonly #directory: SessionDirectory;
  readonly #usage: UsageSums;

  /**
   * `clock` stamps `updatedAt` on writes that are not given a time (`recordLlmCall`).
   * `leaseClock` judges leases in place of the database's `now()`: for tests that move time by hand only, as
   * instances agree on leases only through the database's clock.
   */
  constructor(db: StoreDatabase, clock: Clock = systemClock, options: { leaseClock?: Clock } = {}) {
    const leaseClock = new LeaseClock(options.leaseClock);
    this.#traces = new TranscriptAndTraces(db, clock, leaseClock);
    this.#sessions = new SessionsAndTurns(db, leaseClock);
    this.#transitions = new TurnTransitions(db, leaseClock, this.#traces);
    this.#directory = new SessionDirectory(db, leaseClock);
    this.#usage = new UsageSums(db);
  }

  readTurnState(key: SessionKey, turnId: string): Promise<TurnState> {
    return this.#transitions.readTurnState(key, turnId);
  }

  applyTransition(write: TransitionWrite): Promise<TransitionResult> {
    return this.#transitions.applyTransition(write);
  }

  getSession(key: SessionKey): Promise<SessionRecord | undefined> {
    return this.#sessions.getSession(key);
  }

  getTurn(key: SessionKey, turnId: string): Promise<TurnRecord | undefined> {
    return this.#sessions.getTurn(key, turnId);
  }

  runningAmong(turns: readonly TurnKey[]): Promise<TurnKey[]> {
    return this.#sessions.runningAmong(turns);
  }

  listTurns(key: SessionKey): Promise<TurnRecord[]> {
    return this.#sessions.listTurns(key);
  }

  releaseLease(key: SessionKey, owner: string): Promise<void> {
    return this.#sessions.releaseLease(key, owner);
  }

  changeMode(entry: ModeHistoryEntry, leaseOwner: string): Promise<boolean> {
    return this.#sessions.changeMode(entry, leaseOwner);
  }

  listModeHistory(key: SessionKey): Promise<ModeHistoryEntry[]> {
    return this.#sessions.listModeHistory(key);
  }

  listSessions(input: ListSessionsInput): Promise<SessionListing[]> {
    return this.#directory.listSessions(input);
  }

  takeResponseDeletions(input: TakeResponseDeletionsInput): Promise<ResponseDeletion[]> {
    return this.#directory.takeResponseDeletions(input);
  }

  finishResponseDeletions(input: FinishResponseDeletionsInput): Promise<void> {
    return this.#directory.finishResponseDeletions(input);
  }

  listMessageTurns(key: SessionKey, fromSequence: number, limit: number): Promise<MessageTurn[]> {
    return this.#directory.listMessageTurns(key, fromSequence, limit);
  }

  deleteSession(input: DeleteSessionInput): Promise<DeleteSessionResult> {
    return this.#directory.deleteSession(input);
  }

  findIdleSessions(input: FindIdleSessionsInput): Promise<SessionKey[]> {
    return this.#directory.findIdleSessions(input);
  }

  pruneTraces(input: PruneTracesInput): Promise<number> {
    return this.#directory.pruneTraces(input);
  }

  recordUsage(entries: readonly UsageEntry[]): Promise<void> {
    return this.#usage.recordUsage(entries);
  }

  sumUsage(input: SumUsageInput): Promise<UsageSum[]> {
    return this.#usage.sumUsage(input);
  }

  sumSessionUsage(input: SumSessionUsageInput): Promise<UsageSum[]> {
    return this.#usage.sumSessionUsage(input);
  }

  findExpiredLeases(input: FindExpiredLeasesInput): Promise<SessionKey[]> {
    return this.#sessions.findExpiredLeases(input);
  }

  recordLlmCall(input: RecordLlmCallInput): Promise<boolean> {
    return this.#traces.recordLlmCall(input);
  }

  loadTranscript(key: SessionKey, length: number, from?: number): Promise<TranscriptItem[]> {
    return this.#traces.loadTranscript(key, length, from);
  }

  listCompactions(key: SessionKey): Promise<CompactionRecord[]> {
    return this.#traces.listCompactions(key);
  }

  listLlmCalls(key: SessionKey, turnId: string): Promise<LlmCallRecord[]> {
    return this.#traces.listLlmCalls(key, turnId);
  }
}
