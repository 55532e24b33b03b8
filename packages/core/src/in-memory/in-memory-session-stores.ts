import type { Clock } from "../ports/clock.js";
import type { SessionStores } from "../ports/session-stores.js";
import { InMemoryFileStore } from "./in-memory-file-store.js";
import { InMemorySessionDirectory } from "./in-memory-session-directory.js";
import { InMemorySessions } from "./in-memory-sessions.js";
import { InMemoryTranscriptStore } from "./in-memory-transcript-store.js";
import { InMemoryTurnStore } from "./in-memory-turn-store.js";
import { InMemoryUsageStore } from "./in-memory-usage-store.js";
import { InMemoryWebhookOutbox } from "./in-memory-webhook-outbox.js";

/**
 * The in-memory session stores; `turns` also tells an `InMemoryTurnEventLog` who holds a lease, and `files` is
 * a file store sharing their state, as a SQL store's file store shares its database.
 */
export interface InMemorySessionStores extends SessionStores {
  turns: InMemoryTurnStore;
  files: InMemoryFileStore;
}

/**
 * The session stores in process memory, for tests and single-process development, sharing one state as a SQL
 * store's domains share one database. They define the semantics the contract suites of `@aptix/testing-stores`
 * check and every durable store must share:
 *
 * - Records go in and come out as copies (`structuredClone`): callers never hold live references, and
 *   `Date`s stay `Date`s.
 * - `clock` is the stores' clock, as a database's `now()` is a SQL store's: a lease lasts its `durationMs` from
 *   the clock's now when claimed or renewed, and it alone judges expiry; no time a caller passes does. A lease
 *   is free when none is held or it has expired (`expiresAt <= now`); a held, unexpired lease makes a claim
 *   `busy`, even for the same owner string. It also stamps `updatedAt` on writes that are not given a time.
 * - What the turns' writes and the sessions' deletion judge is in `InMemoryTurnStore`'s and
 *   `InMemorySessionDirectory`'s docs.
 *
 * Every method is synchronous under its `async` signature, so each is atomic with respect to the others.
 */
export function inMemorySessionStores(clock?: Clock): InMemorySessionStores {
  const shared = new InMemorySessions(clock);
  return {
    turns: new InMemoryTurnStore(shared),
    transcripts: new InMemoryTranscriptStore(shared),
    directory: new InMemorySessionDirectory(shared),
    usage: new InMemoryUsageStore(shared),
    files: new InMemoryFileStore(clock, shared),
    webhooks: new InMemoryWebhookOutbox(shared),
  };
}
