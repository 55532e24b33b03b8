import type { AptixResult } from "@aptix/client";
import type { FinalResponse } from "@aptix/contracts";

/**
 * The `--json` line: a final answer's `{ sessionId, turnId, kind, primaryOutputText, files?, usage? }`, or the
 * failure's `{ sessionId, turnId, errors }`.
 */
export function jsonAnswer(sessionId: string, turnId: string, answer: AptixResult<FinalResponse>): string {
  if (!answer.successful) return JSON.stringify({ sessionId, turnId, errors: answer.errors });
  const { kind, primaryOutputText, files, usage } = answer.result;
  return JSON.stringify({
    sessionId: answer.result.sessionId,
    turnId: answer.result.turnId,
    kind,
    primaryOutputText,
    ...(files ? { files } : {}),
    ...(usage ? { usage } : {}),
  });
}
