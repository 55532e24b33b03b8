import type { SessionKey, SessionRecord } from "@aptix/core";

/** How many sessions an instance remembers; past it, the least recently written goes first. */
const REMEMBERED = 10_000;

/**
 * Each session as this instance last wrote it, so `beginTurn` can plan the next turn before its claim and send
 * the start with the claim, in one statement instead of a transaction of two round trips. Never trusted: the
 * start applies only when the session as claimed still has these values, so a session another instance wrote
 * since, or a write this instance did not follow, costs the round trip saved and nothing more.
 */
export class KnownSessions {
  readonly #sessions = new Map<string, SessionRecord>();

  get(key: SessionKey): SessionRecord | undefined {
    return this.#sessions.get(idOf(key));
  }

  /** The session as written now. */
  remember(session: SessionRecord): void {
    const id = idOf(session);
    this.#sessions.delete(id);
    this.#sessions.set(id, session);
    if (this.#sessions.size > REMEMBERED) {
      this.#sessions.delete(this.#sessions.keys().next().value as string);
    }
  }

  /** A write of `set` on a remembered session: remembered with it. */
  update(key: SessionKey, set: Partial<SessionRecord>): void {
    const session = this.get(key);
    if (session !== undefined) this.remember({ ...session, ...set });
  }

  /** A write this instance does not follow, or may not have made. */
  forget(key: SessionKey): void {
    this.#sessions.delete(idOf(key));
  }
}

function idOf(key: SessionKey): string {
  return `${key.principal}\u0000${key.sessionId}`;
}
