import { fail, type InvokeFailure } from "@aptix/contracts";
import type { SessionKey, SessionRecord } from "../records/session-record.js";
import type { TurnRecord } from "../records/turn-record.js";

/** The refusals and failures Entry answers with, each written once. */

/** A user turn whose turnId the session already has for a different body. */
export function turnIdConflict(turnId: string): InvokeFailure {
  return fail("TURN_ID_CONFLICT", `Turn ${JSON.stringify(turnId)} was already sent with a different body.`, {
    turnId,
  });
}

/** A request that needs the session's lease while another turn of the session holds it. */
export function sessionBusy(sessionId: string): InvokeFailure {
  return fail("SESSION_BUSY", "Another turn of this session is running; retry when it has finished.", {
    sessionId,
  });
}

/** A user turn naming a conversation context the configuration does not have. */
export function unconfiguredContext(): InvokeFailure {
  return fail("VALIDATION_FAILED", "conversationContextId names no configured conversation context.", {
    fields: [{ path: "conversationContextId", message: "names no configured conversation context" }],
  });
}

/** A round sent again while the instance running it still holds the session's lease. */
export function stillAnswering(): InvokeFailure {
  return fail("SESSION_BUSY", "This request is still being answered; retry when it has finished.", {
    retryable: true,
  });
}

export function contextGone(session: SessionRecord): InvokeFailure {
  return fail(
    "INTERNAL",
    `The session's conversation context ${session.conversationContextId} is no longer configured.`,
  );
}

export function notAwaiting(turn: TurnRecord): InvokeFailure {
  return fail(
    "TURN_NOT_AWAITING_TOOLS",
    `Turn ${JSON.stringify(turn.turnId)} is ${turn.status}, not awaiting client tools.`,
    {
      turnId: turn.turnId,
      status: turn.status,
    },
  );
}

export function sessionNotFound(sessionId: string): InvokeFailure {
  return fail("SESSION_NOT_FOUND", `No session ${JSON.stringify(sessionId)}.`, { sessionId });
}

/** A turn id the session does not have: TURN_NOT_FOUND, or SESSION_NOT_FOUND when the session is unknown too. */
export function turnNotFound(key: SessionKey, turnId: string, sessionExists: boolean): InvokeFailure {
  return sessionExists
    ? fail("TURN_NOT_FOUND", `No turn ${JSON.stringify(turnId)} in this session.`, { turnId })
    : sessionNotFound(key.sessionId);
}

/** The most turns a session keeps queued behind its running one (`multitask: "enqueue"`). */
export const MAX_QUEUED_TURNS = 8;

/**
 * A turn to enqueue behind a session that keeps MAX_QUEUED_TURNS queued already: a limit that frees up as they
 * run, so the answer says when to try again, as the other limits do.
 */
export function queueFull(sessionId: string): InvokeFailure {
  return fail(
    "RATE_LIMITED",
    `Session ${JSON.stringify(sessionId)} has ${MAX_QUEUED_TURNS} turns queued, the most it keeps; retry when one has run.`,
    { limit: "queuedTurns", max: MAX_QUEUED_TURNS, retryAfterSeconds: 1 },
  );
}
