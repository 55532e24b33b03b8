import { type InvokeResult, ok } from "@aptix/contracts";
import { CHANGE_MODE_TOOL_NAME, type ChangeModeResult } from "../catalog/change-mode-tool.js";
import { orderOutputs, type RoundOpening } from "../composition/round-opening.js";
import type { Clock } from "../ports/clock.js";
import type { LlmToolCall } from "../records/llm-response.js";
import type { PendingToolCalls } from "../records/turn-record.js";
import type {
  ServerToolExecutionInput,
  ServerToolExecutionStep,
} from "../server-tools/server-tool-execution-step.js";
import type { Budgets } from "../usage/budgets.js";
import { resumeCursor } from "./call-cursors.js";
import { type AnsweredCall, failed, type NextStep } from "./next-step.js";
import type { ReasonerInput } from "./reasoner-step.js";
import { budgetSpent, type RoundState } from "./round-state.js";

export interface ToolCallsOptions {
  serverTools: ServerToolExecutionStep;
  clock: Clock;
  budgets?: Budgets | undefined;
}

/**
 * The Reasoner's tool steps: the user's answers to the calls that asked first, as a round opens, and the
 * server's tools of an answered call (`run_server_tools`), with the mode change they make.
 */
export class ToolCalls {
  constructor(private readonly options: ToolCallsOptions) {}

  /**
   * The server's tools of an answered call run, and its mode change applies: the calls left for the client end
   * the round; otherwise the outputs go to the next call, unless a budget is spent.
   */
  async run(round: RoundState, call: AnsweredCall): Promise<NextStep> {
    const { input } = round;
    const { request, response, text } = call;
    const executed = await this.options.serverTools.run({
      calls: response.toolCalls,
      // What this call offered, and so all a call of its response may use (docs/security.md).
      offered: request.tools,
      ...(input.signal ? { signal: input.signal } : {}),
      context: toolContext(input),
    });
    if (!executed.successful) return failed(executed);
    const { outputs, executions, clientCalls, approvals, files, results } = executed.result;
    input.progress.toolExecutions.push(...executions);
    input.progress.files.push(...files);
    const modeChanged = await this.#applyModeChange(input, round.sessionMode, response.toolCalls, results);
    if (!modeChanged.successful) return failed(modeChanged);
    round.sessionMode = modeChanged.result;
    if (clientCalls.length > 0) {
      // The continuation's message is the model's text alone: a welcome waits for the turn's final answer.
      if (text.welcomed) {
        input.text?.reset();
        input.text?.delta(response.text);
      }
      const pending: PendingToolCalls = {
        calls: response.toolCalls,
        clientCallIds: clientCalls.map((clientCall) => clientCall.callId),
        serverOutputs: outputs,
        ...(approvals.length > 0 ? { approvals } : {}),
        resumeCursor: resumeCursor(call),
      };
      return { type: "hand_to_client", text: response.text, clientCalls, pending };
    }
    // Past the budget the turn ends here, before its next call, with the text shown so far.
    const spent = await budgetSpent(this.options.budgets, input, text.answer(response.text));
    if (spent) return failed(spent);
    input.text?.reset();
    round.newItems = orderOutputs(response.toolCalls, outputs);
    return { type: "call_model" };
  }

  /**
   * A continuation's opening with the user's answers to the calls that asked first (docs/server-tools.md) turned into those
   * calls' outputs: an approved call runs (its run among the turn's tool runs), a declined one tells the model so.
   * Any other opening as it is.
   */
  async answerApprovals(input: ReasonerInput): Promise<InvokeResult<RoundOpening>> {
    const { opening, session, progress } = input;
    const approvals = opening.type === "tool_results" ? (opening.pending.approvals ?? []) : [];
    if (opening.type !== "tool_results" || approvals.length === 0) return ok(opening);
    const answered = await this.options.serverTools.runApproved({
      approvals,
      results: opening.toolResults,
      decidedBy: session.principal,
      context: toolContext(input),
      ...(input.signal ? { signal: input.signal } : {}),
    });
    if (!answered.successful) return answered;
    progress.toolExecutions.push(...answered.result.executions);
    progress.files.push(...answered.result.files);
    const asked = new Set(approvals.map((call) => call.callId));
    return ok({
      ...opening,
      toolResults: opening.toolResults.filter((result) => !asked.has(result.toolCallId)),
      pending: {
        ...opening.pending,
        serverOutputs: [...opening.pending.serverOutputs, ...answered.result.outputs],
      },
    });
  }

  /**
   * AGN-011 §5: the last successful `agent_change_mode` of a response wins; the mode and its history persist at
   * once. Several changes in one turn (in one response, or in its successive responses and rounds) warn
   * `MULTIPLE_MODE_CHANGES` once, counting them all. Answers the session's mode after the response.
   */
  async #applyModeChange(
    input: ReasonerInput,
    sessionMode: string,
    calls: LlmToolCall[],
    results: Map<string, unknown>,
  ): Promise<InvokeResult<string>> {
    const changes = calls
      .filter((call) => call.name === CHANGE_MODE_TOOL_NAME && results.has(call.callId))
      .map((call) => results.get(call.callId) as ChangeModeResult);
    const last = changes.at(-1);
    if (!last) return ok(sessionMode);
    // The turn's runs so far, this response's included: earlier rounds' are on the turn, kept in its progress.
    const inTurn = input.progress.toolExecutions.filter(
      (execution) => execution.name === CHANGE_MODE_TOOL_NAME && execution.resultJson !== undefined,
    ).length;
    if (inTurn > 1) {
      const warnings = input.progress.warnings;
      const earlier = warnings.findIndex((warning) => warning.code === "MULTIPLE_MODE_CHANGES");
      if (earlier >= 0) warnings.splice(earlier, 1);
      warnings.push({
        code: "MULTIPLE_MODE_CHANGES",
        message: `The model changed mode ${inTurn} times in this turn; the last change (${last.mode}) applies.`,
      });
    }
    const session = input.session;
    if (last.mode === sessionMode) return ok(sessionMode);
    const changed = await input.lease.changeMode({
      principal: session.principal,
      sessionId: session.sessionId,
      turnId: input.turnId,
      previousMode: sessionMode,
      newMode: last.mode,
      reason: last.reason,
      changedBy: session.principal,
      changedAt: this.options.clock.now(),
    });
    return changed.successful ? ok(last.mode) : changed;
  }
}

/** Who a server tool runs for, and where. */
function toolContext(input: ReasonerInput): ServerToolExecutionInput["context"] {
  const { session } = input;
  return {
    principal: session.principal,
    sessionId: session.sessionId,
    turnId: input.turnId,
    mode: input.mode.id,
    // The cursor holds the turn's workspace once its user message is sent (the request's, else the session's).
    ...(input.progress.cursor.workspaceId !== undefined
      ? { workspaceId: input.progress.cursor.workspaceId }
      : {}),
  };
}
