import { type InvokeResult, ok, type TurnSummary } from "@aptix/contracts";
import type { TurnPersistence } from "../persistence/turn-persistence.js";
import type { Clock } from "../ports/clock.js";
import type { SessionKey } from "../records/session-record.js";
import type { TurnWakeups } from "../streaming/turn-wakeups.js";
import { cancelTransition } from "./decide-transition.js";
import { stillAnswering, turnNotFound } from "./entry-failures.js";
import type { TurnCancels } from "./turn-cancels.js";
import { transitionWrite } from "./turn-transition.js";
import { summarizeTurn } from "./views.js";

/** Reads that find the session changed between their read and the cancel's write (a running round writes). */
const CANCEL_ATTEMPTS = 8;

/**
 * `POST …/turns/:turnId/cancel`: read, decided (`cancelTransition`) and applied as a request's transition is,
 * taking the lease from the round that holds it; then the round is stopped where it runs (here at once,
 * elsewhere through `TurnCancels`' listener). A turn already ended answers as it is.
 */
export class TurnCancellation {
  constructor(
    private readonly persistence: TurnPersistence,
    private readonly cancels: TurnCancels,
    private readonly wakeups: TurnWakeups,
    private readonly clock: Clock,
  ) {}

  async cancel(key: SessionKey, turnId: string): Promise<InvokeResult<TurnSummary>> {
    for (let attempt = 0; attempt < CANCEL_ATTEMPTS; attempt++) {
      const state = await this.persistence.readTurnState(key, turnId);
      if (!state.turn) return turnNotFound(key, turnId, state.session !== undefined);
      const now = this.clock.now();
      const transition = cancelTransition(state, now);
      if (!transition) return ok(summarizeTurn(state.turn));
      const applied = await this.persistence.apply(transitionWrite(key, state, transition, now), false);
      if (applied.outcome !== "applied") continue;
      this.cancels.cancel(key, turnId);
      this.wakeups.notify(key, turnId);
      return ok(summarizeTurn({ ...state.turn, ...transition.cancelled.patch, updatedAt: now }));
    }
    return stillAnswering();
  }
}
