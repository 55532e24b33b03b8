import type { ConversationCursor } from "./conversation-cursor.js";

/** Sessions are named by principal and client-minted id: two principals' equal ids name unrelated sessions. */
export interface SessionKey {
  principal: string;
  sessionId: string;
}

/** One turn of a session. */
export interface TurnKey extends SessionKey {
  turnId: string;
}

export interface SessionRecord extends SessionKey {
  conversationContextId: string;
  agentContextId: string | null;
  /** The authoritative current mode id (AGN-011 §3.2). */
  mode: string;
  /** Latched by user turns (AGN-034 §4.5); null when never set or cleared. */
  solutionContextText: string | null;
  cursor: ConversationCursor;
  /** The turn that is running or awaiting client tools; null when the session is idle. */
  openTurnId: string | null;
  /** Turns started so far; the next turn's sequence number. */
  turnCount: number;
  /**
   * Goes up by one with every write to the session's row or to one of its turns (claims, releases, turn
   * starts and patches, LLM call records, mode changes): a transition decided from a read applies only while
   * it is unchanged. A new session has version 1 (after its creating write); stores set it, never core.
   */
  version: number;
  createdAt: Date;
  updatedAt: Date;
  /** The session this one was forked from, and the turn it was forked before (null: after its last). */
  forkedFrom?: { sessionId: string; turnId: string | null };
}

/** The session fields a turn may change. */
export type SessionPatch = Partial<
  Pick<SessionRecord, "mode" | "solutionContextText" | "cursor" | "openTurnId">
>;
