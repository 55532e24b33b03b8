/** A mode from the Mode Catalog (AGN-011, TUL-010): a stable behavioural context for a session's turns. */
export interface Mode {
  id: string;
  displayName: string;
  /** Mode-specific guidance for the model, sent with the boot prompt and when the model switches to it. */
  instructions: string;
  /** Put before the final text of the turn that switched to this mode. */
  welcomeMessage?: string;
  /** Names of the client and server tools offered in this mode (`agent_change_mode` is always offered too). */
  tools: string[];
  /** A tool the model must call on the first LLM call of each turn in this mode; null lets the model choose. */
  toolChoice: string | null;
}
