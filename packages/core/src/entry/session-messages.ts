import type { SessionMessage, ToolContinuationRequest, UserTurnRequest } from "@aptix/contracts";
import type { LlmCallRecord } from "../records/llm-call-record.js";
import type { TurnRecord } from "../records/turn-record.js";

type MessageToolCall = NonNullable<SessionMessage["toolCalls"]>[number];

/**
 * A turn as a UI shows it: the user's message (the instruction as sent), then the assistant's, with every
 * tool call of the turn in the model's order (`calls`: the turn's LLM call traces), its answer, or why it has
 * none.
 */
export function turnMessages(
  turn: TurnRecord,
  calls: readonly LlmCallRecord[],
): [SessionMessage, SessionMessage] {
  const { turnId, createdAt } = turn;
  // A turn's first round is its user turn; the later ones its tool continuations.
  const [first, ...continuations] = turn.rounds;
  const instruction = (first?.request as UserTurnRequest | undefined)?.instruction;
  const user: SessionMessage = {
    turnId,
    role: "user",
    createdAt,
    ...(instruction === undefined ? {} : { text: instruction }),
  };
  const assistant: SessionMessage = {
    turnId,
    role: "assistant",
    createdAt: turn.completedAt ?? turn.updatedAt,
  };
  const toolCalls = toolCallsOf(
    turn,
    calls,
    continuations.map((round) => round.request as ToolContinuationRequest),
  );
  if (toolCalls.length > 0) assistant.toolCalls = toolCalls;
  const answer = turn.rounds.at(-1)?.result;
  if (turn.status === "completed" && answer?.successful && answer.result.kind === "final") {
    assistant.text = answer.result.primaryOutputText;
    if (answer.result.files !== undefined) assistant.files = answer.result.files;
  } else if (turn.error !== null) {
    assistant.error = { code: turn.error.code, message: turn.error.message };
  }
  return [user, assistant];
}

function toolCallsOf(
  turn: TurnRecord,
  calls: readonly LlmCallRecord[],
  continuations: readonly ToolContinuationRequest[],
): MessageToolCall[] {
  const outcomes = new Map<string, { resultJson?: string; errorMessage?: string }>();
  for (const { toolCallId, resultJson, errorMessage } of [
    ...turn.toolExecutions,
    ...continuations.flatMap((request) => request.toolResults),
  ]) {
    outcomes.set(toolCallId, {
      ...(resultJson === undefined ? {} : { resultJson }),
      ...(errorMessage === undefined ? {} : { errorMessage }),
    });
  }
  return calls.flatMap((call) =>
    (call.response?.toolCalls ?? []).map(({ callId, name, argumentsJson }) => ({
      name,
      argumentsJson,
      ...outcomes.get(callId),
    })),
  );
}
