/** Clients that may follow one turn's event stream at once, on one instance (docs/http-api.md, Limits). */
export const MAX_FOLLOWERS_PER_TURN = 8;

/**
 * The event streams open on each turn, so that one turn cannot be followed by more than
 * `MAX_FOLLOWERS_PER_TURN` clients at once: each follower polls the store while it listens.
 */
export class FollowerSlots {
  readonly #open = new Map<string, number>();

  /** Takes a slot of `turn`; undefined when all are taken. The release frees it once, however often called. */
  take(turn: string): (() => void) | undefined {
    const open = this.#open.get(turn) ?? 0;
    if (open >= MAX_FOLLOWERS_PER_TURN) return undefined;
    this.#open.set(turn, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#open.get(turn) ?? 1) - 1;
      if (left === 0) this.#open.delete(turn);
      else this.#open.set(turn, left);
    };
  }
}
