import { type Clock, type SessionStores, systemClock } from "@aptix/core";
import { LeaseClock } from "./domains/lease.js";
import { LlmCallWrites } from "./domains/llm-call-writes.js";
import type { StoreDatabase } from "./domains/rows.js";
import { DrizzleSessionDirectory } from "./domains/session-directory.js";
import { DrizzleTranscriptStore } from "./domains/transcript-store.js";
import { DrizzleTurnStore } from "./domains/turn-store.js";
import { DrizzleUsageStore } from "./domains/usage-store.js";
import { DrizzleWebhookOutbox } from "./domains/webhook-outbox.js";

export interface DrizzleSessionStoresOptions {
  /** Stamps `updatedAt` on writes that are not given a time (`recordLlmCall`). Default: the system clock. */
  clock?: Clock;
  /**
   * Judges leases in place of the database's `now()`: for tests that move time by hand only, as instances agree
   * on leases only through the database's clock.
   */
  leaseClock?: Clock;
}

/**
 * The session stores over `db`, one per domain (`src/domains/`), with the semantics of core's
 * `inMemorySessionStores` (checked by `@aptix/testing-stores`' contract suites), safe for many server instances
 * sharing one database. Leases are judged by the database's clock (`LeaseClock`).
 */
export function drizzleSessionStores(
  db: StoreDatabase,
  options: DrizzleSessionStoresOptions = {},
): SessionStores {
  const leaseClock = new LeaseClock(options.leaseClock);
  return {
    turns: new DrizzleTurnStore(db, options.clock ?? systemClock, leaseClock, new LlmCallWrites(db)),
    transcripts: new DrizzleTranscriptStore(db),
    directory: new DrizzleSessionDirectory(db, leaseClock),
    usage: new DrizzleUsageStore(db),
    webhooks: new DrizzleWebhookOutbox(db, leaseClock),
  };
}
