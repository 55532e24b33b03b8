/** What a webhook may be told of: a turn's end or pause, a session's compaction, a budget that refused work. */
export const WEBHOOK_EVENT_TYPES = [
  "turn.completed",
  "turn.failed",
  "turn.cancelled",
  "turn.awaiting_client_tools",
  "session.compacted",
  "budget.exceeded",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** A webhook as core sees it: where it goes and what it hears (every event and principal when absent). */
export interface WebhookSubscription {
  /** The URL, as configured: a delivery names its webhook by it. */
  target: string;
  events?: readonly WebhookEventType[];
  principals?: readonly string[];
}

/** A webhook's body: `result` is the answer the turn gave its last request, nothing more of the session. */
export interface WebhookEvent {
  type: WebhookEventType;
  timestamp: string;
  data: {
    principal: string;
    sessionId: string;
    turnId?: string;
    status?: string;
    result?: unknown;
  };
}
