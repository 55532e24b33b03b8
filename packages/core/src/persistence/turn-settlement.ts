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
import { failedTurn, settleLastRound } from "../lifecycle/turn-endings.js";
import { nextStatus } from "../lifecycle/turn-lifecycle.js";
import type { Clock } from "../ports/clock.js";
import type { ReasonerOutcome } from "../reasoner/reasoner-step.js";
import type { LlmFinishReason } from "../records/llm-response.js";
import type { TurnProgress } from "../records/turn-progress.js";
import type { ServerToolExecution, TurnRecord } from "../records/turn-record.js";
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
      // A call the user declined never ran: the trace keeps it, with who declined it.
      const ran = progress.toolExecutions.filter((execution) => execution.approval?.approved !== false);
      if (ran.length > 0) final.toolResults = ran.map(executedToolResult);
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
    const settled = await lease.settle(
      turn.turnId,
      {
        status: nextStatus(turn.status, awaiting ? "round_awaiting" : "round_final"),
        pending: awaiting ? outcome.pending : null,
        rounds: settleLastRound(turn.rounds, result, progress),
        usage: progress.usage,
        llmCallCount: progress.llmCallCount,
        toolExecutions: progress.toolExecutions,
        files: progress.files,
        completedAt: awaiting ? null : this.clock.now(),
      },
      { cursor: progress.cursor, openTurnId: awaiting ? turn.turnId : null },
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
    const marked = await lease.settle(turn.turnId, turnPatch, sessionPatch);
    // Not stored because the lease was lost (another request took the session over): that is the answer.
    return marked.successful ? failure : marked;
  }
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
