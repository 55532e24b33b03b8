import type { AgentExecuteResponse, InvokeResult } from "@aptix/contracts";
import type { TurnObserver } from "@aptix/core";

/**
 * How a round ended, as traces and metrics both name it: its turn `completed`, handed tools to the client
 * (`awaiting_client_tools`), was `cancelled`, or `failed`.
 */
export type RoundOutcome = "completed" | "awaiting_client_tools" | "cancelled" | "failed";

export function roundOutcome(result: InvokeResult<AgentExecuteResponse>): RoundOutcome {
  if (result.successful) return result.result.kind === "final" ? "completed" : "awaiting_client_tools";
  return result.errors[0].code === "TURN_CANCELLED" ? "cancelled" : "failed";
}

/**
 * How a server tool run ended: `ok` (a result), `error` (the tool's own error message, sent back to the model), or
 * `failed` (it threw, timed out or was cancelled: the turn fails).
 */
/** What a server tool's run answered (core names it only in its observer port). */
export type ToolRunResult = Awaited<ReturnType<TurnObserver["toolRun"]>>;

export type ToolRunOutcome = "ok" | "error" | "failed";

export function toolRunOutcome(result: ToolRunResult): ToolRunOutcome {
  if (!result.successful) return "failed";
  return "errorMessage" in result.result ? "error" : "ok";
}
