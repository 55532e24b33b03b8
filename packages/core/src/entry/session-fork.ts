import { fail, type InvokeResult } from "@aptix/contracts";
import type { TurnPersistence } from "../persistence/turn-persistence.js";
import type { Clock } from "../ports/clock.js";
import type { SessionDirectory } from "../ports/session-directory.js";
import type { SessionKey } from "../records/session-record.js";
import { sessionBusy, sessionNotFound, turnNotFound } from "./entry-failures.js";
import type { ReadModels } from "./read-models.js";
import { transactSession } from "./transact-session.js";
import type { SessionSummary } from "./views.js";

/**
 * `POST /v1/sessions/:sessionId/fork`: a new session of the same principal whose conversation is the source's up
 * to (not including) `atTurnId`, all of it when absent, in the mode it had there, copied in one store step
 * through `transact`. Its cursor names no provider-stored response, so its first call replays the copied
 * transcript and deleting either session never breaks the other. Sent again, the fork's view; SESSION_BUSY while
 * the source holds an open turn.
 */
export class SessionFork {
  constructor(
    private readonly persistence: TurnPersistence,
    private readonly directory: Pick<SessionDirectory, "listTurns" | "forkSession">,
    private readonly reads: Pick<ReadModels, "getSession">,
    private readonly clock: Clock,
  ) {}

  fork(
    key: SessionKey,
    to: { newSessionId: string; atTurnId?: string },
  ): Promise<InvokeResult<SessionSummary>> {
    const { persistence } = this;
    const forkKey = { principal: key.principal, sessionId: to.newSessionId };
    const forkedFrom = { sessionId: key.sessionId, turnId: to.atTurnId ?? null };
    const view = () => this.reads.getSession(key.principal, to.newSessionId);
    return transactSession(persistence, key, async () => {
      const [source, existing] = await Promise.all([
        persistence.getSession(key),
        persistence.getSession(forkKey),
      ]);
      if (!source) return { type: "answer", answer: sessionNotFound(key.sessionId) };
      if (existing) {
        const same =
          existing.forkedFrom?.sessionId === forkedFrom.sessionId &&
          existing.forkedFrom.turnId === forkedFrom.turnId;
        return { type: "answer", answer: same ? await view() : existingSession() };
      }
      if (source.openTurnId !== null) return { type: "answer", answer: sessionBusy(key.sessionId) };
      const turns = await this.directory.listTurns(key);
      const at = to.atTurnId === undefined ? undefined : turns.find((turn) => turn.turnId === to.atTurnId);
      if (to.atTurnId !== undefined && !at) {
        return { type: "answer", answer: turnNotFound(key, to.atTurnId, true) };
      }
      const { chainTokens: _chain, ...from } = at?.startCursor ?? source.cursor;
      return {
        type: "copy",
        copy: () =>
          this.directory.forkSession({
            source: key,
            expectVersion: source.version,
            sessionId: to.newSessionId,
            beforeSequence: at?.sequence ?? source.turnCount + 1,
            mode: at?.mode ?? source.mode,
            // Nothing the provider stores: the fork's first call replays what was copied.
            cursor: { ...from, responseId: null },
            forkedFrom,
            now: this.clock.now(),
          }),
        copied: view,
      };
    });
  }
}

function existingSession() {
  const message = "names a session that exists already and is no fork of this one at this turn";
  return fail("VALIDATION_FAILED", `newSessionId ${message}.`, {
    fields: [{ path: "newSessionId", message }],
  });
}
