import {
  type AgentExecuteResponse,
  type ClientToolContinuationResponse,
  type ExecutedToolResult,
  type FinalResponse,
  fail,
  type InvokeFailure,
  type InvokeResult,
  ok,
  type UserWarning,
  validateAgentExecuteResponse,
} from "@aptix/contracts";
import type { ModeCatalog } from "../catalog/mode-catalog.js";
import type { Clock } from "../ports/clock.js";
import type { ReasonerOutcome } from "../reasoner/reasoner-step.js";
import type { LlmFinishReason } from "../records/llm-response.js";
import type { SessionPatch } from "../records/session-record.js";
import type { TurnProgress } from "../records/turn-progress.js";
import type { ServerToolExecution, TurnPatch, TurnRecord, TurnRound } from "../records/turn-record.js";
import type { SessionLease } from "./turn-persistence.js";

/** The round being settled: the lease it runs under, its turn, and what the turn has done so far. */
export interface SettlingRound {
  lease: SessionLease;
  turn: TurnRecord;
  progress: TurnProgress;
}

/**
 * How a round ends (docs/architecture.md, "Turn lifecycle"): its answer is built from the Reasoner's outcome and
 * stored as the round's result together with what the turn did, and the lease is given back.
 */
export class TurnSettlement {
  constructor(
    private readonly modes: ModeCatalog,
    private readonly clock: Clock,
  ) {}

  /** Stores the answer built from the Reasoner's outcome as the round's result, and gives the lease back. */
  async success(
    input: SettlingRound & { outcome: ReasonerOutcome },
  ): Promise<InvokeResult<AgentExecuteResponse>> {
    const { lease, turn, progress, outcome } = input;
    const mode = this.modes.get(outcome.sessionMode);
    const metadata = { sessionId: turn.sessionId, turnId: turn.turnId, modeDisplayName: mode.displayName };
    let response: AgentExecuteResponse;
    if (outcome.kind === "final") {
      const final: FinalResponse = {
        kind: "final",
        ...metadata,
        primaryOutputText: outcome.text,
        usage: progress.usage,
      };
      if (progress.files.length > 0) final.files = progress.files;
      if (progress.toolExecutions.length > 0)
        final.toolResults = progress.toolExecutions.map(executedToolResult);
      const userWarnings = finishWarnings(outcome.finishReason);
      if (userWarnings.length > 0) final.userWarnings = userWarnings;
      response = final;
    } else {
      const continuation: ClientToolContinuationResponse = {
        kind: "client_tool_continuation",
        ...metadata,
        toolCalls: outcome.clientCalls.map((call) => ({
          toolCallId: call.callId,
          name: call.name,
          argumentsJson: call.argumentsJson,
        })),
      };
      if (outcome.text !== "") continuation.toolContinuationMessage = outcome.text;
      response = continuation;
    }
    const checked = validateAgentExecuteResponse(response);
    if (!checked.successful) {
      const failure = fail(
        "INTERNAL",
        "The service produced a response that breaks its own AgentExecuteResponse schema.",
        {
          fields: checked.errors[0].details?.fields,
        },
      );
      return this.failure({ lease, turn, progress, failure });
    }
    const result = ok(response, progress.warnings);
    const awaiting = outcome.kind === "client_tools";
    const settled = await lease.updateTurn(
      turn.turnId,
      {
        status: awaiting ? "awaiting_client_tools" : "completed",
        pending: awaiting ? outcome.pending : null,
        rounds: settleLastRound(turn.rounds, result, progress),
        usage: progress.usage,
        llmCallCount: progress.llmCallCount,
        toolExecutions: progress.toolExecutions,
        files: progress.files,
        completedAt: awaiting ? null : this.clock.now(),
      },
      { sessionPatch: { cursor: progress.cursor, openTurnId: awaiting ? turn.turnId : null }, release: true },
    );
    return settled.successful ? result : settled;
  }

  /** A failed turn keeps its usage and trace, and rolls the provider's view back to where the turn started. */
  async failure(input: SettlingRound & { failure: InvokeFailure }): Promise<InvokeFailure> {
    const { lease, turn, progress } = input;
    const failure: InvokeFailure = {
      ...input.failure,
      warnings: [...input.failure.warnings, ...progress.warnings],
    };
    const { turnPatch, sessionPatch } = failedTurn({ turn, progress, failure, now: this.clock.now() });
    const marked = await lease.updateTurn(turn.turnId, turnPatch, { sessionPatch, release: true });
    // Not stored because the lease was lost (another request took the session over): that is the answer.
    return marked.successful ? failure : marked;
  }
}

/**
 * What failing `turn` writes: the turn failed with `failure` as its last round's result, keeping its usage and
 * trace (`progress`), and the session's provider view rolled back to where the turn started. `pending` stays
 * only when given (an interrupted turn keeps it, so its last round can still run again).
 */
function failedTurn(input: {
  turn: TurnRecord;
  progress: TurnProgress;
  failure: InvokeFailure;
  now: Date;
  pending?: TurnRecord["pending"];
  status?: "failed" | "cancelled";
}): { turnPatch: TurnPatch; sessionPatch: SessionPatch } {
  const { turn, progress, failure, now } = input;
  return {
    turnPatch: {
      status: input.status ?? "failed",
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
    status: "cancelled",
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
function settleLastRound(
  rounds: readonly TurnRound[],
  result: InvokeResult<AgentExecuteResponse>,
  { retrieval }: Pick<TurnProgress, "retrieval">,
): TurnRound[] {
  return rounds.map((round, index) =>
    index === rounds.length - 1 ? { ...round, result, ...(retrieval ? { retrieval } : {}) } : round,
  );
}

function executedToolResult(execution: ServerToolExecution): ExecutedToolResult {
  const { toolCallId, name, executionMs } = execution;
  return execution.errorMessage !== undefined
    ? { toolCallId, name, executionMs, errorMessage: execution.errorMessage }
    : { toolCallId, name, executionMs, resultJson: execution.resultJson ?? "null" };
}

function finishWarnings(reason: LlmFinishReason): UserWarning[] {
  if (reason === "length") {
    return [{ code: "OUTPUT_TRUNCATED", message: "The answer was cut off at the model's output limit." }];
  }
  if (reason === "content_filter") {
    return [{ code: "CONTENT_FILTERED", message: "The provider withheld part of the answer." }];
  }
  return [];
}
