import {
  fail,
  type InvokeResult,
  isToolContinuationRequest,
  ok,
  type UserTurnRequest,
} from "@aptix/contracts";
import type { TurnPersistence } from "../persistence/turn-persistence.js";
import type { Clock } from "../ports/clock.js";
import type { SessionDirectory } from "../ports/session-directory.js";
import type { SessionKey } from "../records/session-record.js";
import { decideRewind } from "./decide-turn.js";
import { sessionBusy, sessionNotFound, turnNotFound } from "./entry-failures.js";
import type { ReadModels } from "./read-models.js";
import { transactSession } from "./transact-session.js";
import { decisionWrite } from "./turn-decision.js";
import type { SessionSummary } from "./views.js";

/**
 * `POST /v1/sessions/:sessionId/rewind`: the session goes back to before a turn (`decideRewind`), in one store
 * step through `transact`; refused SESSION_BUSY while a turn is open, answered as it is when sent again. Answers
 * the session's view. A regenerate is a rewind before the session's last turn, then its user input again as a new
 * turn (`regeneration`).
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
    return transactSession(persistence, key, async () => {
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
    });
  }

  /**
   * The user turn that answers `turnId` again as `newTurnId`, after a rewind before it: only the session's last
   * turn is regenerated. Sent again (the new turn exists), the same request, which its turn answers as stored;
   * should the rewind have been made without the new turn, the old turn is still the last one and goes on.
   */
  async regeneration(
    key: SessionKey,
    turnId: string,
    again: { newTurnId: string; stream?: boolean },
  ): Promise<InvokeResult<UserTurnRequest>> {
    const { persistence } = this;
    const turn = await persistence.getTurn(key, turnId);
    const request = turn?.rounds[0]?.request;
    if (!turn || !request || isToolContinuationRequest(request)) {
      return turnNotFound(key, turnId, (await persistence.getSession(key)) !== undefined);
    }
    const { stream: _stream, ...input } = request;
    const regenerated = {
      ...input,
      turnId: again.newTurnId,
      ...(again.stream === undefined ? {} : { stream: again.stream }),
    };
    if (await persistence.getTurn(key, again.newTurnId)) return ok(regenerated);
    const session = await persistence.getSession(key);
    if (session?.turnCount !== turn.sequence) {
      const message =
        "names a turn that is not the session's last: rewind before it and send a new turn instead";
      return fail("VALIDATION_FAILED", `turnId ${message}.`, { fields: [{ path: "turnId", message }] });
    }
    const rewound = await this.rewind(key, turnId);
    return rewound.successful ? ok(regenerated) : rewound;
  }
}
