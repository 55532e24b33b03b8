import type { AgentExecuteResponse, InvokeResult } from "@aptix/contracts";
import type { ConversationCursor } from "../records/conversation-cursor.js";
import type { LlmToolCall } from "../records/llm-response.js";
import type { ModeHistoryEntry } from "../records/mode-history-entry.js";
import type { SessionKey, SessionRecord } from "../records/session-record.js";
import type { TurnRecord, TurnStatus } from "../records/turn-record.js";

/** One page of a principal's sessions: most recently active first (`updatedAt`, then `sessionId`, descending). */
export interface ListSessionsInput {
  principal: string;
  limit: number;
  /** Only sessions whose latest turn naming a workspace named this one. */
  workspaceId?: string;
  /**
   * Only sessions whose title holds this, ignoring case: the first 80 characters of `firstInstruction`, trailing
   * white space trimmed (what the list shows as `title`).
   */
  titleContains?: string;
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
 * events and the files named here), in one atomic step, while its version is `expectVersion`. A file another
 * session holds (a fork's copied turns name it) is not deleted: it becomes that session's, its turn of the same id.
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
 * What `forkSession` makes, in one atomic step: a session `sessionId` of the source's principal, with the source's
 * context, its turns before `beforeSequence` (same ids, same records), the compactions and mode changes made in
 * them and its transcript up to `cursor.transcriptLength`, in `mode`, at `cursor` (which names nothing the provider
 * stores: its first call replays). Its version is 1 and it holds no open turn nor lease. The files the copied turns produced are shared,
 * not copied (the copied records name them by id): a store sharing one database with the file store counts the
 * fork among their holders in the same step, so deleting either session leaves the other's downloads whole.
 */
export interface ForkSessionInput {
  source: SessionKey;
  /** The source's version as read: the fork is made only while it is unchanged. */
  expectVersion: number;
  sessionId: string;
  beforeSequence: number;
  mode: string;
  cursor: ConversationCursor;
  forkedFrom: { sessionId: string; turnId: string | null };
  now: Date;
}

/**
 * - `forked`: the new session exists, with every part copied.
 * - `stale`: the source is missing or its version is not `expectVersion`, or the new session exists already;
 *   nothing written.
 */
export type ForkSessionResult = "forked" | "stale";

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

/**
 * Sessions as a whole: read by key, listed, found idle and deleted with everything of them, and the provider
 * responses a deletion leaves to delete.
 */
export interface SessionDirectory {
  getSession(key: SessionKey): Promise<SessionRecord | undefined>;
  listTurns(key: SessionKey): Promise<TurnRecord[]>;
  listModeHistory(key: SessionKey): Promise<ModeHistoryEntry[]>;
  /** See ListSessionsInput. */
  listSessions(input: ListSessionsInput): Promise<SessionListing[]>;
  /**
   * Up to `limit` turns of the session from sequence `fromSequence` on, in order, as a page of messages shows
   * them: one read, and only what the messages answer (no artifact, no trace payload).
   */
  listMessageTurns(key: SessionKey, fromSequence: number, limit: number): Promise<MessageTurn[]>;
  /** See ForkSessionInput. */
  forkSession(input: ForkSessionInput): Promise<ForkSessionResult>;
  /** See DeleteSessionInput. */
  deleteSession(input: DeleteSessionInput): Promise<DeleteSessionResult>;
  /** Up to `limit` sessions of any principal idle since before `idleBefore`: the session retention's. */
  findIdleSessions(input: FindIdleSessionsInput): Promise<SessionKey[]>;
  /** Up to `limit` response deletions due by `dueBy`, each put off until `retryAt` in the same step. */
  takeResponseDeletions(input: TakeResponseDeletionsInput): Promise<ResponseDeletion[]>;
  /** Forgets the deletions done; counts an attempt of each one failed and sets when it is due again. */
  finishResponseDeletions(input: FinishResponseDeletionsInput): Promise<void>;
}
