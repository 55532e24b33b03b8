import type { ToolDefinition } from "../records/tool-definition.js";

export interface ServerToolContext {
  principal: string;
  sessionId: string;
  turnId: string;
  /** The turn's mode: fixed for the whole reasoner loop (AGN-011 §4.7). */
  mode: string;
}

/** A file a server tool produced; core stores it and lists it as a FileRef on the final response. */
export interface ProducedFile {
  name: string;
  mimeType: string;
  content: Uint8Array;
  description?: string;
}

export interface ServerToolResult {
  /** Any JSON value: it goes back to the model as the call's output. */
  result: unknown;
  files?: ProducedFile[];
}

export type ArgumentsCheck<A> = { ok: true; value: A } | { ok: false; message: string };

/**
 * A tool the server executes itself (AGN-027 D). Bad arguments are the model's mistake: `parseArguments`
 * answers why and the model sees it as the call's error output. `execute` throwing is the server's
 * failure and fails the turn.
 */
export interface ServerTool<A = unknown> {
  readonly definition: ToolDefinition;
  parseArguments(args: unknown): ArgumentsCheck<A>;
  execute(args: A, context: ServerToolContext): Promise<ServerToolResult>;
}
