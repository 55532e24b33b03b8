import type { Clock, SessionKey } from "@aptix/core";
import { and, eq, type SQL, sql } from "drizzle-orm";
import type { PgUpdateSetSource } from "drizzle-orm/pg-core";
import { sessions } from "../schema.js";
import { keyWhere, type StoreTransaction, sentPrepared } from "./rows.js";

/** Columns a write sets on a session row: values, or SQL computed by the database. */
export type SessionSet = PgUpdateSetSource<typeof sessions>;

/**
 * The leases' clock, in SQL: the database's `now()`, so instances whose clocks disagree agree on every lease
 * (deadlines are `now() + duration`, expiry is `lease_expires_at <= now()`); or, for tests that move time by
 * hand, a `leaseClock`'s time.
 */
export class LeaseClock {
  readonly #clock: Clock | undefined;

  constructor(clock?: Clock) {
    this.#clock = clock;
  }

  /** The leases' now, `offsetMs` on. */
  now(offsetMs = 0): SQL {
    const now = this.#clock === undefined ? sql`now()` : sql`${this.#clock.now().toISOString()}::timestamptz`;
    return offsetMs === 0 ? now : sql`(${now} + ${offsetMs}::double precision * interval '1 millisecond')`;
  }
}

/**
 * A lease-guarded write's first statement: sets `set` on the session row, and bumps its `version`, while `owner`
 * holds its lease (and `also` holds), which locks the row to the commit, so a claim racing the transaction waits
 * for it and then sees what it wrote. Answers whether the lease was held; when not, the caller writes nothing more.
 */
export async function holdLease(
  tx: StoreTransaction,
  key: SessionKey,
  owner: string,
  set: SessionSet,
  also?: SQL,
): Promise<boolean> {
  const rows = await sentPrepared(
    tx
      .update(sessions)
      .set({ ...set, version: sql`${sessions.version} + 1` })
      .where(and(keyWhere(sessions, key), eq(sessions.leaseOwner, owner), also))
      .returning({ principal: sessions.principal }),
  );
  return rows.length > 0;
}
