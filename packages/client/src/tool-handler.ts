/** What a tool handler gets besides the call's arguments. */
export interface ToolContext {
  sessionId: string;
  turnId: string;
  toolCallId: string;
  name: string;
  /** The arguments as the model wrote them (JSON text of an object). */
  argumentsJson: string;
  /** `runTurn`'s signal: a long tool should stop when it aborts. */
  signal: AbortSignal | undefined;
}

/**
 * Runs one client tool call. Its value is sent back as `resultJson` (`JSON.stringify(value)`; `undefined` is
 * sent as `null`); a throw is sent as `errorMessage`, which the model reads like any other tool output.
 */
export type ToolHandler = (args: Record<string, unknown>, context: ToolContext) => unknown;
