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
  /** Also read this turn, under the new lease, in the same step (`turn` of the answer, when it exists). */
  turnId?: string;
}

export type ClaimSessionResult =
  | { outcome: "claimed"; session: SessionRecord; turn?: TurnRecord }
  | { outcome: "busy" }
  | { outcome: "not_found" };

/**
 * A user turn's start, decided from the session as claimed: the running turn (its `sequence` the session's
 * `turnCount + 1`) and what the session changes with it.
 */
export interface TurnStart {
  turn: TurnRecord;
  sessionPatch: SessionPatch;
}

/**
 * The most turns of the key's principal running at once, across every instance: a turn runs while its status is
 * `running` and its session's lease is held and unexpired by the store's clock (a turn awaiting client tools
 * holds no lease). A claim that would start or resume a turn past it is refused `rate_limited`, writing
 * nothing, in the same atomic step as the claim. Absent: no cap. Two claims racing on a SQL store each judge
 * the other's uncommitted lease as not held: the cap may be passed by as many claims as run at the same moment.
 */
export interface RunningTurnCap {
  maxRunningTurns?: number;
}

export interface BeginTurnInput extends Omit<ClaimSessionInput, "turnId">, RunningTurnCap {
  create: NonNullable<ClaimSessionInput["create"]>;
  /** The user turn's id: when the session has a turn by that id, nothing is claimed nor written. */
  turnId: string;
  /**
   * Called synchronously with the session as claimed (lease held): the turn to start in the same atomic step,
   * or undefined to keep the lease only (the caller goes on with the separate writes). A store may call it
   * first with the session as the store last wrote it, to send the start with the claim: that start applies
   * only if the session as claimed has every field the same, else the store calls it again, with the session
   * as claimed. So it answers from its argument alone and has no effect of its own.
   */
  plan(session: SessionRecord): TurnStart | undefined;
}

/**
 * - `turn_exists`: the session has a turn `turnId` (as stored); nothing was claimed or written.
 * - `started`: lease claimed and the planned turn started; `session` as it is after the start.
 * - `claimed`: lease claimed, no turn started: the plan declined, or a turn by that id appeared meanwhile.
 * - `rate_limited`: the principal runs `maxRunningTurns` turns already; nothing was claimed or written (a
 *   session is not created either). Judged before `busy`.
 * - `busy`, `not_found`: as `claimSession` answers them.
 */
export type BeginTurnResult =
  | { outcome: "turn_exists"; turn: TurnRecord }
  | { outcome: "started"; session: SessionRecord; turn: TurnRecord }
  | { outcome: "rate_limited" }
  | ClaimSessionResult;

export interface ResumeTurnInput extends RunningTurnCap {
  key: SessionKey;
  lease: Lease;
  /** The turn a tool continuation resumes. */
  turnId: string;
  /**
   * Called at most once, synchronously, with the session as claimed (lease held) and the turn as read with the
   * claim: the patch that resumes the turn in the same atomic step, or undefined to claim nothing after all.
   * The patch applies only while the turn still awaits client tools with as many rounds as read.
   */
  plan(session: SessionRecord, turn: TurnRecord): TurnPatch | undefined;
}

/**
 * - `resumed`: lease claimed and the turn patched as planned; `session` as claimed, `turn` as patched.
 * - `claimed`: lease claimed, nothing written: the turn moved on between the read and the claim (another
 *   instance wrote it meanwhile); `turn` as read again under the lease.
 * - `busy`: the session's lease is held; `turn` as read, nothing claimed.
 * - `rate_limited`: the principal runs `maxRunningTurns` turns already (judged before `busy`); `turn` as
 *   read, nothing claimed.
 * - `declined`: the plan answered undefined; `turn` as read, nothing claimed.
 * - `not_found`: the session has no turn `turnId`.
 */
export type ResumeTurnResult =
  | { outcome: "resumed" | "claimed"; session: SessionRecord; turn: TurnRecord }
  | { outcome: "busy" | "rate_limited" | "declined"; turn: TurnRecord }
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
  /**
   * LLM calls to keep first, in order, in the same atomic write, each as `recordLlmCall` keeps it (without
   * renewing the lease): the round's last calls, settled with it in one commit.
   */
  llmCalls?: readonly LlmCallWrite[];
}

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
}

export interface RecordLlmCallInput extends LlmCallWrite {
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
  /**
   * A user turn's first write, in one atomic step: answers the turn `turnId` when the session has it (claiming
   * nothing); otherwise claims the session as `claimSession` does and starts the turn `plan` decides, as
   * `startTurn` does (no turn abandoned).
   */
  beginTurn(input: BeginTurnInput): Promise<BeginTurnResult>;
  /**
   * A tool continuation's first write, in one atomic step: reads the turn `turnId`, claims the session when its
   * lease is free, and applies the patch `plan` decides (see ResumeTurnInput). Nothing is claimed when the
   * turn is missing, the session busy or the plan declines.
   */
  resumeTurn(input: ResumeTurnInput): Promise<ResumeTurnResult>;
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
  /** Sessions whose lease expired while their open turn was running: turns left running by a crashed instance. */
  findExpiredLeases(input: FindExpiredLeasesInput): Promise<SessionKey[]>;
}
