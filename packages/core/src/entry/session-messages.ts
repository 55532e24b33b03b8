import type { SessionMessage } from "@aptix/contracts";
import type { MessageTurn } from "../ports/session-directory.js";

/**
 * A turn as a UI shows it: the user's message (the instruction as sent), then the assistant's, with every
 * tool call of the turn in the model's order and its outcome, its answer, or why it has none.
 */
export function turnMessages(turn: MessageTurn): [SessionMessage, SessionMessage] {
  const { turnId, createdAt, instruction } = turn;
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
  const outcomes = new Map(
    turn.toolOutcomes.map(({ toolCallId, resultJson, errorMessage }) => [
      toolCallId,
      {
        ...(resultJson === undefined ? {} : { resultJson }),
        ...(errorMessage === undefined ? {} : { errorMessage }),
      },
    ]),
  );
  if (turn.toolCalls.length > 0) {
    assistant.toolCalls = turn.toolCalls.map(({ callId, name, argumentsJson }) => ({
      name,
      argumentsJson,
      ...outcomes.get(callId),
    }));
  }
  const { answer } = turn;
  if (turn.status === "completed" && answer?.successful && answer.result.kind === "final") {
    assistant.text = answer.result.primaryOutputText;
    if (answer.result.files !== undefined) assistant.files = answer.result.files;
  } else if (turn.error !== null) {
    assistant.error = { code: turn.error.code, message: turn.error.message };
  }
  return [user, assistant];
}
