import type { AgentExecuteResponse, InvokeResult } from "@aptix/contracts";
import type { CompactionRecord } from "../records/compaction-record.js";
import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { LlmToolCall } from "../records/llm-response.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionPatch, SessionRecord, TurnKey } from "../records/session-record.js";
import type { TranscriptItem } from "../records/transcript-item.js";
import type { TurnPatch, TurnRecord, TurnStatus } from "../records/turn-record.js";
import type { UsageEntry } from "../records/usage-entry.js";

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

/** What a request's transition is decided from: read in one step, without a lease. */
export interface TurnState {
  /** Absent when the session does not exist. */
  session?: SessionRecord;
  /** The turn the request names, when the session has one by that id. */
  turn?: TurnRecord;
  /** The session's open turn (`session.openTurnId`), when it has one other than `turn`. */
  openTurn?: TurnRecord;
}

/** A transition's writes, which the store applies in one atomic step together with the claim of the lease. */
export interface TransitionWrite {
  key: SessionKey;
  /**
   * The most turns of the key's principal running at once, across every instance: a turn runs while its status
   * is `running` and its session's lease is held and unexpired by the store's clock (a turn awaiting client
   * tools holds no lease). A transition that would start or resume a turn past it is refused `rate_limited`,
   * writing nothing, in the same atomic step as its claim. Absent: no cap. Two claims racing on a SQL store each
   * judge the other's uncommitted lease as not held: the cap may be passed by as many claims as run at the same
   * moment.
   */
  maxRunningTurns?: number;
  /** Taken with this write when the session's lease is free or expired by the store's clock. */
  lease: Lease;
  /** Stamps what this write creates or changes (`createdAt`, `updatedAt`); leases are judged by the store's clock. */
  now: Date;
  /**
   * The session's `version` as read: the write applies only while it is unchanged. Absent: the session must
   * not exist yet, and `create` creates it.
   */
  expectVersion?: number;
  create?: Pick<SessionRecord, "conversationContextId" | "agentContextId" | "mode">;
  /** A turn to insert (the session's `turnCount` goes up by one). */
  insertTurn?: TurnRecord;
  /** Patches of turns the session has, applied in order. */
  turnPatches?: readonly { turnId: string; patch: TurnPatch }[];
  sessionPatch?: SessionPatch;
  /** A mode history row to append (`sessionPatch.mode` sets the session's mode). */
  modeChange?: ModeHistoryEntry;
  /** Gives the lease back in the same step: a transition after which nothing runs (the reaper's). */
  releaseLease?: boolean;
  /**
   * Takes the lease even when another owner holds it, unexpired (never `busy`): a cancel, which ends the turn
   * the holder runs. The holder's later lease-guarded writes change nothing.
   */
  overrideLease?: boolean;
  /**
   * Guards the write by the lease instead of the version (`expectVersion` is then ignored): it applies while
   * `lease.owner` holds the session's lease, expired or not, until another claimant took it, however the
   * holder's own writes moved the version. The lease is neither claimed nor renewed (`releaseLease` gives it
   * back); a turn to patch must exist. A running turn's writes: with turn and session patches and `llmCalls`
   * only.
   */
  whileLeaseHeld?: boolean;
  /**
   * LLM calls to keep first, in order, in the same step, each as `recordLlmCall` keeps it (without renewing the
   * lease): a round's last calls, settled with it. With `whileLeaseHeld` only. Their transcript progress moves
   * the session's cursor before `sessionPatch` applies.
   */
  llmCalls?: readonly LlmCallWrite[];
}

/**
 * - `applied`: lease claimed and every write made; `session` as it is after them (new version).
 * - `rate_limited`: the principal runs `maxRunningTurns` turns already; nothing written (judged first).
 * - `busy`: another owner holds the lease, unexpired; nothing written.
 * - `stale`: the session's version is not `expectVersion`, or the session exists though `expectVersion` is
 *   absent (or a write conflicts, e.g. the turn id exists); nothing written: read again and decide again.
 *   Guarded by the lease (`whileLeaseHeld`): the lease is not the owner's any more, or a turn to patch is
 *   missing; nothing written.
 */
export type TransitionResult =
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
}

export interface FindExpiredLeasesInput {
  /** Only leases expired at least this long ago by the store's clock (0: every expired lease). */
  expiredForMs: number;
  limit: number;
}

/** One page of a principal's sessions: most recently active first (`updatedAt`, then `sessionId`, descending). */
export interface ListSessionsInput {
  principal: string;
  limit: number;
  /** Only sessions whose latest turn naming a workspace named this one. */
  workspaceId?: string;
  /** Only sessions after this one in the order: the last of the previous page. */
  after?: { updatedAt: Date; sessionId: string };
}

/** A listed session: what its list entry shows, and nothing more read. */
export interface SessionListing
  extends Pick<SessionRecord, "sessionId" | "mode" | "turnCount" | "createdAt" | "updatedAt"> {
  /** The status of its latest turn (`sequence` = `turnCount`); absent without turns. */
  lastTurnStatus?: TurnStatus;
  /** The instruction of its first user turn that had one, as sent: at least its first 256 characters. */
  firstInstruction?: string;
  /** The workspace its latest turn naming one named. */
  workspaceId?: string;
}

/** What a page of messages reads of a turn. */
export interface MessageTurn
  extends Pick<TurnRecord, "turnId" | "status" | "error" | "createdAt" | "updatedAt" | "completedAt"> {
  /** The instruction of its user turn (its first round's request), as sent. */
  instruction?: string;
  /** The tool calls of its LLM calls, in the model's order. */
  toolCalls: LlmToolCall[];
  /** Every tool call's outcome known to the turn: the server's runs, then the client's results, by call id. */
  toolOutcomes: Array<{ toolCallId: string; resultJson?: string; errorMessage?: string }>;
  /** Its last round's answer. */
  answer?: InvokeResult<AgentExecuteResponse>;
}

/**
 * What `deleteSession` removes: the session and everything of it the store keeps (turns, transcript, traces,
 * mode history; a store sharing one database with the turn event log and the file store also the session's
 * events and the files named here), in one atomic step, while its version is `expectVersion`.
 */
export interface DeleteSessionInput {
  key: SessionKey;
  expectVersion: number;
  /** The files the session's turns produced. */
  fileIds: readonly string[];
  /**
   * The provider that stored the session's responses, when it stores them: each response id of the session's
   * LLM calls is kept as a ResponseDeletion of it, in the same step, for the housekeeping to delete there.
   */
  responsesStoredBy?: string;
}

/** A response a provider stored for a session since deleted, waiting to be deleted at the provider. */
export interface ResponseDeletion {
  provider: string;
  responseId: string;
  /** How many times the provider was asked already. */
  attempts: number;
}

export interface TakeResponseDeletionsInput {
  limit: number;
  /** Those due by then. */
  dueBy: Date;
  /** The deletions taken are not due again before this (an instance that stops meanwhile loses none). */
  retryAt: Date;
}

export interface FinishResponseDeletionsInput {
  /** Deleted at the provider (or given up on): forgotten. */
  done: readonly Pick<ResponseDeletion, "provider" | "responseId">[];
  /** Failed: tried again at `retryAt`, with one more attempt counted. */
  failed: readonly (Pick<ResponseDeletion, "provider" | "responseId"> & { retryAt: Date })[];
}

/**
 * - `deleted`: gone, every part at once.
 * - `busy`: its lease is held, unexpired (a turn runs); nothing deleted.
 * - `stale`: missing, or its version is not `expectVersion`; nothing deleted.
 */
export type DeleteSessionResult = "deleted" | "busy" | "stale";

export interface FindIdleSessionsInput {
  /** Sessions whose `updatedAt` is before this. */
  idleBefore: Date;
  limit: number;
}

/** What `sumUsage` groups a principal's usage by (besides provider and model, which price each group). */
type UsageGrouping = "day" | "model" | "session";

export interface SumUsageInput {
  principal: string;
  /**
   * Whole UTC days, read from the daily roll-ups: the calls of the days from `from` on, before `to` (both UTC
   * midnights).
   */
  from: Date;
  to: Date;
  groupBy: UsageGrouping;
  /**
   * With `groupBy: "session"`, a page of sessions in id order (the calls outside any session, key "", first):
   * the `limit` first with usage in the range whose key is after `after`.
   */
  page?: { after?: string; limit: number };
}

/** A session's usage: its calls that started at or after `since` (when the session under this key was made). */
export interface SumSessionUsageInput extends SessionKey {
  since: Date;
}

/**
 * The usage of one group of a principal's model calls: its `key` (the UTC date `YYYY-MM-DD` the calls started
 * on, the model, or the session id, "" for calls outside any session), and the provider and model of its calls
 * (one group per pair).
 */
export interface UsageSum extends Pick<UsageEntry, "provider" | "model"> {
  key: string;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  llmCalls: number;
}

export interface PruneTracesInput {
  /** LLM calls that started before this. */
  startedBefore: Date;
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
  /**
   * Those of `turns` that are `running`, in one read: how a round learns, without a notification, that its turn
   * was cancelled or ended by another instance (or its session deleted).
   */
  runningAmong(turns: readonly TurnKey[]): Promise<TurnKey[]>;
  /** The session, the turn `turnId` and the session's open turn, as one consistent read. */
  readTurnState(key: SessionKey, turnId: string): Promise<TurnState>;
  /**
   * Claims the session's lease and makes every write of `write`, atomically, while the session's version is
   * the one read (see TransitionResult); `releaseLease` gives the lease back in the same step.
   */
  applyTransition(write: TransitionWrite): Promise<TransitionResult>;
  /** Gives the lease up if `owner` holds it; a no-op otherwise. */
  releaseLease(key: SessionKey, owner: string): Promise<void>;
  /**
   * Keeps the trace of one call, writes its transcript progress and renews the lease from now, atomically. A
   * successful call's usage (`usageOf`) is kept with it, once under its `callId` (never replaced), with the
   * daily roll-ups `sumUsage` reads in the same step, and outlives its session: `deleteSession` does not remove
   * it.
   */
  recordLlmCall(input: RecordLlmCallInput): Promise<boolean>;
  /** Sets the session's mode and appends the history entry, atomically (AGN-011 §5.2). */
  changeMode(entry: ModeHistoryEntry, leaseOwner: string): Promise<boolean>;
  /** The transcript items from position `from` (default 0) up to `length`, in order: what a replay sends. */
  loadTranscript(key: SessionKey, length: number, from?: number): Promise<TranscriptItem[]>;
  /** The session's compactions, oldest first. */
  listCompactions(key: SessionKey): Promise<CompactionRecord[]>;
  listTurns(key: SessionKey): Promise<TurnRecord[]>;
  listModeHistory(key: SessionKey): Promise<ModeHistoryEntry[]>;
  listLlmCalls(key: SessionKey, turnId: string): Promise<LlmCallRecord[]>;
  /** See ListSessionsInput. */
  listSessions(input: ListSessionsInput): Promise<SessionListing[]>;
  /**
   * Up to `limit` turns of the session from sequence `fromSequence` on, in order, as a page of messages shows
   * them: one read, and only what the messages answer (no artifact, no trace payload).
   */
  listMessageTurns(key: SessionKey, fromSequence: number, limit: number): Promise<MessageTurn[]>;
  /** See DeleteSessionInput. */
  deleteSession(input: DeleteSessionInput): Promise<DeleteSessionResult>;
  /** Up to `limit` sessions of any principal idle since before `idleBefore`: the session retention's. */
  findIdleSessions(input: FindIdleSessionsInput): Promise<SessionKey[]>;
  /**
   * The trace retention: sets `request`, `providerRequest` and `providerResponse` to null on up to `limit` LLM
   * calls started before `startedBefore` that still have a request, keeping the rest (response, error, timings);
   * answers how many it pruned.
   */
  pruneTraces(input: PruneTracesInput): Promise<number>;
  /**
   * Keeps the usage of calls made outside a turn's trace (embeddings), each once under its `callId` (one kept
   * already changes nothing), with the daily roll-ups, atomically.
   */
  recordUsage(entries: readonly UsageEntry[]): Promise<void>;
  /**
   * The principal's usage over whole UTC days, summed by group from the daily roll-ups (see SumUsageInput,
   * UsageSum): never a read of every call. In no set order.
   */
  sumUsage(input: SumUsageInput): Promise<UsageSum[]>;
  /** A session's usage by model (the key), from its own calls (see SumSessionUsageInput). In no set order. */
  sumSessionUsage(input: SumSessionUsageInput): Promise<UsageSum[]>;
  /** Sessions whose lease expired while their open turn was running: turns left running by a crashed instance. */
  findExpiredLeases(input: FindExpiredLeasesInput): Promise<SessionKey[]>;
  /** Up to `limit` response deletions due by `dueBy`, each put off until `retryAt` in the same step. */
  takeResponseDeletions(input: TakeResponseDeletionsInput): Promise<ResponseDeletion[]>;
  /** Forgets the deletions done; counts an attempt of each one failed and sets when it is due again. */
  finishResponseDeletions(input: FinishResponseDeletionsInput): Promise<void>;
}
