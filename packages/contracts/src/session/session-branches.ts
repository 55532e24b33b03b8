import { z } from "zod";
import { IdentifierSchema } from "../text/identifier.js";
import { bodyValidator } from "../workspace/workspace-requests.js";

/** The body of `POST /v1/sessions/:sessionId/rewind`: the turn to go back before. */
export const SessionRewindRequestSchema = z.strictObject({ beforeTurnId: IdentifierSchema });

export type SessionRewindRequest = z.output<typeof SessionRewindRequestSchema>;

export const validateSessionRewindRequest = bodyValidator(SessionRewindRequestSchema, "rewind request");

/** The body of `POST /v1/sessions/:sessionId/turns/:turnId/regenerate`: the id of the turn that answers again. */
export const TurnRegenerateRequestSchema = z.strictObject({
  newTurnId: IdentifierSchema,
  stream: z.boolean().optional(),
});

export type TurnRegenerateRequest = z.output<typeof TurnRegenerateRequestSchema>;

export const validateTurnRegenerateRequest = bodyValidator(TurnRegenerateRequestSchema, "regenerate request");

/** The body of `POST /v1/sessions/:sessionId/fork`: the new session's id, and the turn to fork before. */
export const SessionForkRequestSchema = z.strictObject({
  newSessionId: IdentifierSchema,
  atTurnId: IdentifierSchema.optional(),
});

export type SessionForkRequest = z.output<typeof SessionForkRequestSchema>;

export const validateSessionForkRequest = bodyValidator(SessionForkRequestSchema, "fork request");
