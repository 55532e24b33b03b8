import { type AgentExecuteResponse, fail, type InvokeFailure, type InvokeResult } from "@aptix/contracts";
import type { SessionPatch } from "../records/session-record.js";
import type { TurnProgress } from "../records/turn-progress.js";
import type { TurnPatch, TurnRecord, TurnRound } from "../records/turn-record.js";
import { nextStatus } from "./turn-lifecycle.js";

/*
 * The patches that end a turn, decided from the lifecycle table: shared by admission (a cancel, a turn taken over
 * from a stopped instance) and settlement (a failed round), so neither layer imports the other.
 */

/**
 * What failing `turn` writes: the turn failed with `failure` as its last round's result, keeping its usage and
 * trace (`progress`), and the session's provider view rolled back to where the turn started. `pending` stays
 * only when given (an interrupted turn keeps it, so its last round can still run again).
 */
export function failedTurn(input: {
  turn: TurnRecord;
  progress: TurnProgress;
  failure: InvokeFailure;
  now: Date;
  pending?: TurnRecord["pending"];
  /** What ended it: default a failed round. */
  event?: "round_failed" | "lease_lost" | "cancel";
}): { turnPatch: TurnPatch; sessionPatch: SessionPatch } {
  const { turn, progress, failure, now } = input;
  return {
    turnPatch: {
      status: nextStatus(turn.status, input.event ?? "round_failed"),
      pending: input.pending ?? null,
      error: failure.errors[0],
      rounds: settleLastRound(turn.rounds, failure, progress),
      usage: progress.usage,
      llmCallCount: progress.llmCallCount,
      toolExecutions: progress.toolExecutions,
      files: progress.files,
      completedAt: now,
    },
    sessionPatch: { cursor: turn.startCursor, openTurnId: null },
  };
}

/**
 * A turn left running by an instance whose lease expired, failed with TURN_INTERRUPTED (retryable) because
 * another request takes the session over, or the reaper found it. Its pending calls stay, so its last round
 * can still run again (see `isReapedRound`).
 */
export function interruptedTurn(
  turn: TurnRecord,
  now: Date,
): { turnPatch: TurnPatch; sessionPatch: SessionPatch } {
  return failedTurn({
    turn,
    progress: storedProgress(turn),
    failure: interruptedFailure(turn.turnId),
    now,
    pending: turn.pending,
    event: "lease_lost",
  });
}

/**
 * A running or awaiting turn its client cancelled: it ends `cancelled` with TURN_CANCELLED as its last round's
 * answer, keeping the usage and trace it had stored, and the session's provider view rolls back to where it
 * started, as after a failure: nothing of it enters the conversation.
 */
export function cancelledTurn(
  turn: TurnRecord,
  now: Date,
): { turnPatch: TurnPatch; sessionPatch: SessionPatch } {
  return failedTurn({
    turn,
    progress: storedProgress(turn),
    failure: cancelledFailure(turn.turnId),
    now,
    event: "cancel",
  });
}

/** The answer of a cancelled turn, to the request that was waiting for it and to any sent again. */
function cancelledFailure(turnId: string): InvokeFailure {
  return fail("TURN_CANCELLED", "The turn was cancelled before it finished; nothing of it was kept.", {
    turnId,
  });
}

/** The stored answer of a turn whose instance stopped before it finished: the work may be sent again as a new turn. */
export function interruptedFailure(turnId: string): InvokeFailure {
  return fail(
    "TURN_INTERRUPTED",
    "The server instance running this turn stopped before it finished; the turn failed. Send it again as a new turn.",
    { turnId, retryable: true },
  );
}

/** What a turn has stored as done before its round runs: nothing of this round yet. */
export function storedProgress(turn: TurnRecord): TurnProgress {
  return {
    cursor: turn.startCursor,
    usage: turn.usage,
    llmCallCount: turn.llmCallCount,
    toolExecutions: turn.toolExecutions,
    files: turn.files,
    warnings: [],
  };
}

/** The last round with its answer, and with the retrieval its run made (a user turn's). */
export function settleLastRound(
  rounds: readonly TurnRound[],
  result: InvokeResult<AgentExecuteResponse>,
  { retrieval }: Pick<TurnProgress, "retrieval">,
): TurnRound[] {
  return rounds.map((round, index) =>
    index === rounds.length - 1 ? { ...round, result, ...(retrieval ? { retrieval } : {}) } : round,
  );
}
