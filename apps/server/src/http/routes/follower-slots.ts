import { OpenCounts } from "./open-counts.js";

/** Clients that may follow one turn's event stream at once, on one instance (docs/http-api.md, Limits). */
export const MAX_FOLLOWERS_PER_TURN = 8;

/**
 * Event streams of followers one principal may have open at once, on one instance, whatever their turns: each
 * holds a socket and a page of its turn's events while its client reads (docs/http-api.md, Limits).
 */
export const MAX_FOLLOWERS_PER_PRINCIPAL = 32;

/** A slot taken (`release` frees it once, however often called), or the limit that left none. */
export type FollowerSlot = { release: () => void } | { full: "turn" | "principal" };

/**
 * The event streams of followers open on this instance, by turn and by principal, so that one turn cannot be
 * followed by more than `MAX_FOLLOWERS_PER_TURN` clients at once (each polls the store while it listens), nor
 * one principal hold more than `MAX_FOLLOWERS_PER_PRINCIPAL` streams.
 */
export class FollowerSlots {
  readonly #byTurn = new OpenCounts(MAX_FOLLOWERS_PER_TURN);
  readonly #byPrincipal = new OpenCounts(MAX_FOLLOWERS_PER_PRINCIPAL);

  /** Takes a slot of `turn` (a name that holds its principal) for `principal`. */
  take(principal: string, turn: string): FollowerSlot {
    if (this.#byTurn.full(turn)) return { full: "turn" };
    if (this.#byPrincipal.full(principal)) return { full: "principal" };
    const releases = [this.#byTurn.open(turn), this.#byPrincipal.open(principal)];
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        for (const release of releases) release();
      },
    };
  }
}
