/** One mode transition of a session (AGN-011 §3.2). */
export interface ModeHistoryEntry {
  principal: string;
  sessionId: string;
  turnId: string;
  previousMode: string;
  newMode: string;
  reason: string;
  /** Who asked: the principal of the turn. */
  changedBy: string;
  changedAt: Date;
}
