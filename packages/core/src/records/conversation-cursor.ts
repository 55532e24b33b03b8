import type { TranscriptItem } from "./transcript-item.js";

/**
 * Where a session's conversation with its provider stands. A call continues from `responseId` (providers
 * that store responses) or replays the first `transcriptLength` transcript items (providers that do not),
 * then sends `pendingInput` before its own new items. Restoring an older cursor rolls the provider's view
 * back: a failed turn restores the cursor it started from, and an abandoned one the cursor from before the
 * call whose tool calls went unanswered, so the provider never sees a function call without its output.
 */
export interface ConversationCursor {
  responseId: string | null;
  /** Items the provider has not acknowledged yet (they are not in the transcript). */
  pendingInput: TranscriptItem[];
  /** How many transcript items belong to this state; items past it are stale and get overwritten. */
  transcriptLength: number;
  /**
   * The mode of the last user turn this state holds (its `[MODE: …]`, pending input included): the mode the
   * model was last told about. It rolls back with the cursor, so a failed or abandoned turn's rolled-back
   * message does not count. Absent on a fresh cursor, and on cursors stored before it was kept.
   */
  mode?: string;
  /**
   * The workspace of the last user turn this state holds that named one (docs/knowledge.md): a turn that names
   * none retrieves from it. It rolls back with the cursor, like `mode`.
   */
  workspaceId?: string;
  /**
   * Workspace chunks the provider holds: sent in a `[CONTEXT]` block of this state's continuation chain (pending
   * input included), oldest first, at most `MAX_PROVIDED_CHUNKS`. A later turn refers to them instead of
   * sending them again.
   */
  providedChunks?: ProvidedChunk[];
  /**
   * Where a replay starts: the first transcript item of the latest compaction (its system message, summary and
   * recent turns), 0 when the session was never compacted. A compaction restarts the provider chain from there.
   */
  replayFrom?: number;
  /** Where the latest compaction's items end: the turns from there on are new since it. */
  compactedTo?: number;
  /**
   * The tokens the provider reported for the last call of this chain (its input, and its output, which the next
   * call's input holds too): with the new items, the free estimate of the next call's size. Absent when unknown
   * (a chain from before it was kept).
   */
  chainTokens?: { input: number; output: number };
}

/** A chunk sent in a `[CONTEXT]` block, as a later block names it (`Previously provided: <path>:<a>-<b>`). */
export interface ProvidedChunk {
  /** The index's id: a changed document gets new chunks, which are sent again. */
  chunkId: string;
  path: string;
  startLine: number;
  endLine: number;
}

/**
 * How many sent chunks a cursor remembers. Older ones are sent again when retrieved: by then they are far back in
 * the conversation, and the bound keeps the session row small.
 */
export const MAX_PROVIDED_CHUNKS = 200;

/** What the provider holds beyond the items themselves: the cursor fields a call's new cursor carries over. */
export type HeldContext = Pick<ConversationCursor, "mode" | "workspaceId" | "providedChunks">;

/** The cursor's `HeldContext`, as spreadable fields (none it does not have). */
export function heldContextOf(cursor: ConversationCursor): HeldContext {
  const held: HeldContext = {};
  if (cursor.mode !== undefined) held.mode = cursor.mode;
  if (cursor.workspaceId !== undefined) held.workspaceId = cursor.workspaceId;
  if (cursor.providedChunks !== undefined) held.providedChunks = cursor.providedChunks;
  return held;
}

export const EMPTY_CURSOR: ConversationCursor = Object.freeze({
  responseId: null,
  pendingInput: [],
  transcriptLength: 0,
}) as ConversationCursor;

/** A session whose provider has seen nothing yet: its next call carries the system prompt. */
export function isFreshCursor(cursor: ConversationCursor): boolean {
  return cursor.responseId === null && cursor.transcriptLength === 0 && cursor.pendingInput.length === 0;
}
