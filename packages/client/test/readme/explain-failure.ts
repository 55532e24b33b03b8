import type { AptixResult } from "@aptix/client";

/** A line for the user about a failed answer; `undefined` for a success. */
export function explainFailure(answer: AptixResult<unknown>): string | undefined {
  if (answer.successful) return undefined;
  const [error] = answer.errors;
  switch (error.code) {
    case "TURN_INTERRUPTED":
      return "The service restarted during the turn: send it again as a new turn.";
    case "VALIDATION_FAILED":
      return `The request was refused: ${error.message}`;
    default:
      // Also the codes a newer service has and this client does not know yet.
      return `${error.code}: ${error.message}`;
  }
}
