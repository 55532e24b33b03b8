import type { CompactionRecord } from "../records/compaction-record.js";
import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionPatch, SessionRecord, TurnKey } from "../records/session-record.js";
import type { TranscriptItem } from "../records/transcript-item.js";
import type { TurnPatch, TurnRecord } from "../records/turn-record.js";
import type { WebhookDelivery } from "./webhook-outbox.js";

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

/** What a request's write is decided from: read in one step, without a lease. */
export interface TurnState {
  /** Absent when the session does not exist. */
  session?: SessionRecord;
  /** The turn the request names, when the session has one by that id. */
  turn?: TurnRecord;
  /** The session's open turn (`session.openTurnId`), when it has one other than `turn`. */
  openTurn?: TurnRecord;
  /** The session's queued turns, when it has any: how many, and the first by sequence (the next to start). */
  queued?: { count: number; next: TurnRecord };
}

/** What a session is created with. */
export type NewSession = Pick<SessionRecord, "conversationContextId" | "agentContextId" | "mode">;

/** What every write of a session's turns carries. */
interface TurnWriteBase {
  key: SessionKey;
  /** Stamps what this write creates or changes (`createdAt`, `updatedAt`); leases are judged by the store's clock. */
  now: Date;
  /** Patches of turns the session has, applied in order. */
  turnPatches?: readonly { turnId: string; patch: TurnPatch }[];
  sessionPatch?: SessionPatch;
  /** Deliveries of the webhook events the write makes: kept in its atomic step, only when it applies. */
  webhooks?: readonly WebhookDelivery[];
}

/** A write that claims the session's lease: taken with it when free or expired by the store's clock. */
interface ClaimingWrite extends TurnWriteBase {
  lease: Lease;
  /**
   * The most turns of the key's principal running at once, across every instance: a turn runs while its status
   * is `running` and its session's lease is held and unexpired by the store's clock (a turn awaiting client
   * tools holds no lease). A write that would start or resume a turn past it is refused `rate_limited`,
   * writing nothing, in the same atomic step as its claim. Absent: no cap. Two claims racing on a SQL store each
   * judge the other's uncommitted lease as not held: the cap may be passed by as many claims as run at the same
   * moment.
   */
  maxRunningTurns?: number;
  /** A turn to insert (the session's `turnCount` goes up by one). */
  insertTurn?: TurnRecord;
  /** A mode history row to append (`sessionPatch.mode` sets the session's mode). */
  modeChange?: ModeHistoryEntry;
  /** Gives the lease back in the same step: a write after which nothing runs (the reaper's). */
  releaseLease?: boolean;
}

/**
 * A session's writes, applied in one atomic step, keyed by what guards them:
 *
 * - `create`: the session must not exist yet; `create` makes it, and the lease is claimed.
 * - `version`: the session's `version` as read: the write applies only while it is unchanged, and the lease is
 *   claimed.
 * - `override`: a cancel, which ends the turn the holder runs: guarded by the version, it takes the lease even
 *   when another owner holds it, unexpired (never `busy`), and gives it back in the same step. The holder's
 *   later lease-guarded writes change nothing.
 * - `queue`: a change of the session's queued turns, made while another turn may run: guarded by the version, it
 *   neither claims nor touches the lease; `insertTurn` queues a turn (the session's `turnCount` goes up by one),
 *   `turnPatches` end queued ones.
 * - `lease`: a running turn's write, applied while `owner` holds the session's lease, expired or not, until
 *   another claimant took it, however the holder's own writes moved the version. The lease is neither claimed
 *   nor renewed (`releaseLease` gives it back); every turn to patch must exist. `llmCalls` are kept first, in
 *   order, in the same step, each as `recordLlmCall` keeps it (a round's last calls, settled with it): their
 *   transcript progress moves the session's cursor before `sessionPatch` applies.
 */
export type TurnWrite =
  | (ClaimingWrite & { guard: "create"; create: NewSession })
  | (ClaimingWrite & { guard: "version"; expectVersion: number })
  | (TurnWriteBase & { guard: "override"; expectVersion: number })
  | (TurnWriteBase & { guard: "queue"; expectVersion: number; insertTurn?: TurnRecord })
  | (TurnWriteBase & {
      guard: "lease";
      owner: string;
      releaseLease?: boolean;
      llmCalls?: readonly LlmCallWrite[];
    });

/**
 * - `applied`: every write made (the lease claimed, unless the write gave it back or was guarded by it);
 *   `session` as it is after them (new version).
 * - `rate_limited`: the principal runs `maxRunningTurns` turns already; nothing written (judged first).
 * - `busy`: another owner holds the lease, unexpired; nothing written.
 * - `stale`: the session's version is not `expectVersion`, or the session exists though the write creates it
 *   (or a write conflicts, e.g. the turn id exists); nothing written: read again and decide again. Guarded by
 *   the lease: the lease is not the owner's any more, or a turn to patch is missing; nothing written.
 */
export type TurnWriteResult =
  | { outcome: "applied"; session: SessionRecord }
  | { outcome: "rate_limited" | "busy" | "stale" };

/** After a successful call: the items it added, written at `fromPosition` onwards, and the new cursor. */
export interface TranscriptProgress {
  items: TranscriptItem[];
  fromPosition: number;
  cursor: ConversationCursor;
}

/** One LLM call's trace and, after a successful call, the transcript progress it made. */
export interface LlmCallWrite {
  call: LlmCallRecord;
  progress?: TranscriptProgress;
  /** The call wrote a compaction's summary: kept with it (a compaction of the same position replaced). */
  compaction?: CompactionRecord;
}

export interface RecordLlmCallInput extends LlmCallWrite {
  /** The holder, and how long from the store's now its renewed lease lasts. */
  lease: Lease;
  /** Deliveries of the webhook events the call makes (a compaction's): kept only when the lease holds. */
  webhooks?: readonly WebhookDelivery[];
}

export interface FindExpiredLeasesInput {
  /** Only leases expired at least this long ago by the store's clock (0: every expired lease). */
  expiredForMs: number;
  limit: number;
}

/**
 * Turns and the session's lease: the read a request is decided from, the one write that applies the decision,
 * and a running turn's lease-guarded writes. Every write that belongs to a running turn names the lease owner
 * and answers false (changing nothing) when that owner no longer holds the lease. Each method is one short
 * atomic step: no transaction stays open across an LLM call.
 */
export interface TurnStore {
  getTurn(key: SessionKey, turnId: string): Promise<TurnRecord | undefined>;
  /**
   * Those of `turns` that are `running`, in one read: how a round learns, without a notification, that its turn
   * was cancelled or ended by another instance (or its session deleted).
   */
  runningAmong(turns: readonly TurnKey[]): Promise<TurnKey[]>;
  /** The session, the turn `turnId` and the session's open turn, as one consistent read. */
  readTurnState(key: SessionKey, turnId: string): Promise<TurnState>;
  /** Makes every write of `write`, atomically, under its guard (see TurnWrite, TurnWriteResult). */
  write(write: TurnWrite): Promise<TurnWriteResult>;
  /** Gives the lease up if `owner` holds it; a no-op otherwise. */
  releaseLease(key: SessionKey, owner: string): Promise<void>;
  /**
   * Keeps the trace of one call, writes its transcript progress and renews the lease from now, atomically. A
   * successful call's usage (`usageOf`) is kept with it, once under its `callId` (never replaced), with the
   * daily roll-ups `UsageStore.sumUsage` reads in the same step, and outlives its session:
   * `SessionDirectory.deleteSession` does not remove it.
   */
  recordLlmCall(input: RecordLlmCallInput): Promise<boolean>;
  /** Sets the session's mode and appends the history entry, atomically (AGN-011 §5.2). */
  changeMode(entry: ModeHistoryEntry, leaseOwner: string): Promise<boolean>;
  /** Sessions whose lease expired while their open turn was running: turns left running by a crashed instance. */
  findExpiredLeases(input: FindExpiredLeasesInput): Promise<SessionKey[]>;
  /**
   * The first queued turn (by sequence) of sessions that hold no open turn, at most `limit`: turns whose
   * predecessors ended and that no instance started yet.
   */
  findStartableQueued(limit: number): Promise<TurnKey[]>;
}
