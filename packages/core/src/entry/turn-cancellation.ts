import { type InvokeResult, ok, type TurnSummary } from "@aptix/contracts";
import { transact } from "../persistence/transact.js";
import type { TurnPersistence } from "../persistence/turn-persistence.js";
import type { Clock } from "../ports/clock.js";
import type { SessionKey } from "../records/session-record.js";
import type { TurnWakeups } from "../streaming/turn-wakeups.js";
import { decideCancel } from "./decide-turn.js";
import { stillAnswering, turnNotFound } from "./entry-failures.js";
import type { RunningRounds } from "./running-rounds.js";
import { decisionWrite } from "./turn-decision.js";
import { summarizeTurn } from "./views.js";

/** Reads that find the session changed between their read and the cancel's write (a running round writes). */
const CANCEL_ATTEMPTS = 8;

/**
 * `POST …/turns/:turnId/cancel`: read, decided (`decideCancel`) and applied as a request is (`transact`),
 * taking the lease from the round that holds it; then the round is stopped where it runs (here at once,
 * elsewhere through `RunningRounds`' listener). A turn already ended answers as it is.
 */
export class TurnCancellation {
  constructor(
    private readonly persistence: TurnPersistence,
    private readonly rounds: RunningRounds,
    private readonly wakeups: TurnWakeups,
    private readonly clock: Clock,
  ) {}

  cancel(key: SessionKey, turnId: string): Promise<InvokeResult<TurnSummary>> {
    const { persistence } = this;
    return transact({
      persistence,
      key,
      attempts: CANCEL_ATTEMPTS,
      lostRace: stillAnswering(),
      decide: async () => {
        const state = await persistence.readTurnState(key, turnId);
        if (!state.turn) {
          return { type: "answer", answer: turnNotFound(key, turnId, state.session !== undefined) };
        }
        const now = this.clock.now();
        const cancel = decideCancel(state, now);
        if (!cancel) return { type: "answer", answer: ok(summarizeTurn(state.turn)) };
        const cancelled = { ...state.turn, ...cancel.cancelled.patch, updatedAt: now };
        return {
          type: "apply",
          change: decisionWrite(state, cancel, now),
          // The write takes the lease whoever holds it: never busy.
          busy: stillAnswering(),
          applied: async () => {
            this.rounds.cancel(key, turnId);
            this.wakeups.notify(key, turnId);
            return ok(summarizeTurn(cancelled));
          },
        };
      },
    });
  }
}
