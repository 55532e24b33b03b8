import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionPatch, SessionRecord } from "../records/session-record.js";
import type { TranscriptItem } from "../records/transcript-item.js";
import type { TurnPatch, TurnRecord, TurnStatus } from "../records/turn-record.js";

/**
 * A claim on a session's lease: one turn runs per session at a time, across every server instance. The store
 * judges leases by its own clock (a database's `now()`), never by a caller's: instances whose clocks disagree
 * still agree on who holds a session, so a lease is asked for by duration, and the store sets its deadline.
 */
export interface Lease {
  /** Unique per turn execution. */
  owner: string;
  /** How long the lease lasts, from the store's now. */
  durationMs: number;
}

export interface ClaimSessionInput {
  key: SessionKey;
  lease: Lease;
  /** Stamps a session this claim creates (`createdAt`, `updatedAt`); leases are never judged by it. */
  now: Date;
  /** Create the session with these values when it does not exist; without it a missing session is `not_found`. */
  create?: Pick<SessionRecord, "conversationContextId" | "agentContextId" | "mode">;
}

export type ClaimSessionResult =
  | { outcome: "claimed"; session: SessionRecord }
  | { outcome: "busy" }
  | { outcome: "not_found" };

export interface StartTurnInput {
  turn: TurnRecord;
  sessionPatch: SessionPatch;
  /** A turn awaiting client tools that this user turn abandons. */
  abandonTurnId?: string;
  leaseOwner: string;
}

export interface UpdateTurnInput {
  key: SessionKey;
  turnId: string;
  /** Apply only if the turn is in this status (a transition, e.g. awaiting_client_tools → running). */
  expectStatus?: TurnStatus;
  turnPatch: TurnPatch;
  sessionPatch?: SessionPatch;
  leaseOwner: string;
  /** Give the lease up with this write: the round is over. */
  releaseLease?: boolean;
}

export interface RecordLlmCallInput {
  call: LlmCallRecord;
  /** After a successful call: the items it added, written at `cursor.transcriptLength` onwards, and the new cursor. */
  progress?: { items: TranscriptItem[]; fromPosition: number; cursor: ConversationCursor };
  /** The holder, and how long from the store's now its renewed lease lasts. */
  lease: Lease;
}

export interface FindExpiredLeasesInput {
  /** Only leases expired at least this long ago by the store's clock (0: every expired lease). */
  expiredForMs: number;
  limit: number;
}

/**
 * Durable sessions, turns, transcripts, traces and mode history. Every write that belongs to a running turn
 * names the lease owner and answers false (changing nothing) when that owner no longer holds the lease.
 * Each method is one short atomic step: no transaction stays open across an LLM call.
 */
export interface SessionStore {
  getSession(key: SessionKey): Promise<SessionRecord | undefined>;
  getTurn(key: SessionKey, turnId: string): Promise<TurnRecord | undefined>;
  /** Creates the session if asked and absent, then takes its lease if it is free or expired by the store's clock. */
  claimSession(input: ClaimSessionInput): Promise<ClaimSessionResult>;
  /** Gives the lease up if `owner` holds it; a no-op otherwise. */
  releaseLease(key: SessionKey, owner: string): Promise<void>;
  /** Inserts the running turn, marks `abandonTurnId` abandoned, applies the session patch, bumps `turnCount`. */
  startTurn(input: StartTurnInput): Promise<"started" | "turn_exists" | "lease_lost">;
  updateTurn(input: UpdateTurnInput): Promise<boolean>;
  /** Keeps the trace of one call, writes its transcript progress and renews the lease from now, atomically. */
  recordLlmCall(input: RecordLlmCallInput): Promise<boolean>;
  /** Sets the session's mode and appends the history entry, atomically (AGN-011 §5.2). */
  changeMode(entry: ModeHistoryEntry, leaseOwner: string): Promise<boolean>;
  /** The first `length` transcript items, in order: what a replay sends. */
  loadTranscript(key: SessionKey, length: number): Promise<TranscriptItem[]>;
  listTurns(key: SessionKey): Promise<TurnRecord[]>;
  listModeHistory(key: SessionKey): Promise<ModeHistoryEntry[]>;
  listLlmCalls(key: SessionKey, turnId: string): Promise<LlmCallRecord[]>;
  /** Sessions whose lease expired while a turn was open: turns left running by a crashed instance. */
  findExpiredLeases(input: FindExpiredLeasesInput): Promise<SessionKey[]>;
}
