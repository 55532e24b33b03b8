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
