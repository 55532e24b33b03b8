import type { InvokeResult } from "@aptix/contracts";
import { transact } from "../persistence/transact.js";
import type { TurnPersistence } from "../persistence/turn-persistence.js";
import type { Clock } from "../ports/clock.js";
import type { SessionDirectory } from "../ports/session-directory.js";
import type { SessionKey } from "../records/session-record.js";
import { decideRewind } from "./decide-turn.js";
import { sessionBusy, sessionNotFound, turnNotFound } from "./entry-failures.js";
import type { ReadModels } from "./read-models.js";
import { decisionWrite } from "./turn-decision.js";
import type { SessionSummary } from "./views.js";

/** Reads that find the session changed between their read and the rewind's write before it answers busy. */
const REWIND_ATTEMPTS = 3;

/**
 * `POST /v1/sessions/:sessionId/rewind`: the session goes back to before a turn (`decideRewind`), in one store
 * step through `transact`; refused SESSION_BUSY while a turn is open, answered as it is when sent again. Answers
 * the session's view.
 */
export class SessionRewind {
  constructor(
    private readonly persistence: TurnPersistence,
    private readonly directory: Pick<SessionDirectory, "listTurns">,
    private readonly reads: Pick<ReadModels, "getSession">,
    private readonly clock: Clock,
  ) {}

  rewind(key: SessionKey, beforeTurnId: string): Promise<InvokeResult<SessionSummary>> {
    const { persistence } = this;
    const view = () => this.reads.getSession(key.principal, key.sessionId);
    return transact({
      persistence,
      key,
      attempts: REWIND_ATTEMPTS,
      lostRace: sessionBusy(key.sessionId),
      decide: async () => {
        const session = await persistence.getSession(key);
        if (!session) return { type: "answer", answer: sessionNotFound(key.sessionId) };
        const turns = await this.directory.listTurns(key);
        const turn = turns.find((candidate) => candidate.turnId === beforeTurnId);
        if (!turn) return { type: "answer", answer: turnNotFound(key, beforeTurnId, true) };
        const now = this.clock.now();
        const rewind = decideRewind(session, turns, turn, now);
        if (rewind === "busy") return { type: "answer", answer: sessionBusy(key.sessionId) };
        if (!rewind) return { type: "answer", answer: await view() };
        return {
          type: "apply",
          change: decisionWrite({ session }, rewind, now),
          busy: sessionBusy(key.sessionId),
          applied: view,
        };
      },
    });
  }
}
