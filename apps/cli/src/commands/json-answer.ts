import type { AptixResult } from "@aptix/client";
import type { FinalResponse } from "@aptix/contracts";
import { visibleJson } from "../terminal/visible.js";

/**
 * The `--json` line: a final answer's `{ sessionId, turnId, kind, primaryOutputText, files?, usage? }`, or the
 * failure's `{ sessionId, turnId, errors }`.
 */
export function jsonAnswer(sessionId: string, turnId: string, answer: AptixResult<FinalResponse>): string {
  if (!answer.successful) return visibleJson({ sessionId, turnId, errors: answer.errors });
  const { kind, primaryOutputText, files, usage } = answer.result;
  return visibleJson({
    sessionId: answer.result.sessionId,
    turnId: answer.result.turnId,
    kind,
    primaryOutputText,
    ...(files ? { files } : {}),
    ...(usage ? { usage } : {}),
  });
}
