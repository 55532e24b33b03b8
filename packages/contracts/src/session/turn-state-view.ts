import { z } from "zod";
import { AgentExecuteResponseSchema } from "../response/agent-execute-response.js";
import { InvokeErrorSchema } from "../result/invoke-error.js";
import { TURN_STATUSES } from "./session-views.js";

/** What a background turn's request is answered with (HTTP 202): the turn, accepted, and its status. */
export const TurnAcceptedSchema = z.strictObject({
  sessionId: z.string(),
  turnId: z.string(),
  status: z.enum(TURN_STATUSES),
});
export type TurnAccepted = z.infer<typeof TurnAcceptedSchema>;

/**
 * `GET /v1/sessions/:sessionId/turns/:turnId`: a turn's status and, once its latest round has ended, the answer
 * a waiting client got for it: `result` when it succeeded, `errors` when it failed.
 */
export const TurnStateViewSchema = z.strictObject({
  turnId: z.string(),
  status: z.enum(TURN_STATUSES),
  result: AgentExecuteResponseSchema.optional(),
  errors: z.array(InvokeErrorSchema).optional(),
});
export type TurnStateView = z.infer<typeof TurnStateViewSchema>;
