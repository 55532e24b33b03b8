import type { SessionDirectory } from "./session-directory.js";
import type { TranscriptStore } from "./transcript-store.js";
import type { TurnStore } from "./turn-store.js";
import type { UsageStore } from "./usage-store.js";
import type { WebhookOutbox } from "./webhook-outbox.js";

/**
 * The stores of sessions, one per domain, over one database: a write that spans domains (a turn's settlement
 * with its LLM calls, a session's deletion with its transcript) is still one atomic step of the domain that
 * makes it. A new domain is a port beside these and a field here.
 */
export interface SessionStores {
  turns: TurnStore;
  transcripts: TranscriptStore;
  directory: SessionDirectory;
  usage: UsageStore;
  webhooks: WebhookOutbox;
}
