import type { Clock } from "@aptix/core";
import { and, eq, type SQL, sql } from "drizzle-orm";
import { sessions } from "../schema.js";
import { parts, type StoreDatabase, type Write } from "./rows.js";

/**
 * The leases' clock, in SQL: the database's `now()`, so instances whose clocks disagree agree on every lease
 * (deadlines are `now() + duration`, expiry is `lease_expires_at <= now()`); or, for tests that move time by
 * hand, a `leaseClock`'s time, sent as a placeholder's value (`values`), so prepared statements stay valid.
 */
export class LeaseClock {
  readonly #clock: Clock | undefined;

  constructor(clock?: Clock) {
    this.#clock = clock;
  }

  /** The leases' now, plus the milliseconds the placeholder `offsetMs` names when given. */
  now(offsetMs?: string): SQL {
    const now = this.#clock === undefined ? sql`now()` : sql`${sql.placeholder("leaseNow")}::timestamptz`;
    return offsetMs === undefined
      ? now
      : sql`(${now} + ${sql.placeholder(offsetMs)}::double precision * interval '1 millisecond')`;
  }

  /** The values of `now`'s own placeholders, for a statement that uses it. */
  values(): Record<string, unknown> {
    return this.#clock === undefined ? {} : { leaseNow: this.#clock.now().toISOString() };
  }
}

/**
 * A lease-guarded write, as one statement (atomic without a transaction): its first part sets `set` on the
 * session row (placeholders `principal`, `sessionId`) and bumps its `version`, while the placeholder `owner`
 * holds its lease (and `also` holds); each of `writes`, built with the guard it is given, writes only when that
 * part did. Its rows: the session row as written when the lease was held, none (and nothing written) when not.
 */
export function whileLeaseHeld(
  db: StoreDatabase,
  { set, also }: { set: Record<string, SQL>; also?: SQL },
  writes: (held: SQL) => readonly Write[],
) {
  const lease = db.$with("lease_held").as(
    db
      .update(sessions)
      .set({ ...set, version: sql`${sessions.version} + 1` })
      .where(
        and(
          eq(sessions.principal, sql.placeholder("principal")),
          eq(sessions.sessionId, sql.placeholder("sessionId")),
          eq(sessions.leaseOwner, sql.placeholder("owner")),
          also,
        ),
      )
      .returning(),
  );
  return db
    .with(lease, ...parts(db, writes(sql`exists (select from ${lease})`)))
    .select()
    .from(lease);
}
