/**
 * Every code the service puts in an InvokeResult's `warnings`: system-level notes on a request it answered (AGN-033
 * §2.1). A later minor version may add codes, so a client reads unknown ones too.
 */
export const WARNING_CODES = [
  /** An existing session kept its conversation context: the request's different `conversationContextId` was ignored. */
  "CONVERSATION_CONTEXT_KEPT",
  /** The service runs its built-in demo model (`APTIX_DEMO`): every answer is scripted, no provider was called. */
  "DEMO_MODEL",
  /** The session's mode is no longer configured: the session moved to its context's default mode. */
  "MODE_RESET",
  /** The model changed mode several times in one turn: the last change applies. */
  "MULTIPLE_MODE_CHANGES",
  /** The turn's workspace is not indexed for the principal: the turn ran without `[CONTEXT]`. */
  "WORKSPACE_NOT_FOUND",
] as const;

export type WarningCode = (typeof WARNING_CODES)[number];
