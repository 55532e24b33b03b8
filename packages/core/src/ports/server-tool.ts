import type { FileRef } from "@aptix/contracts";
import type { ToolDefinition } from "../records/tool-definition.js";

/** A file a server tool produced, before it is stored. */
export interface ProducedFile {
  name: string;
  mimeType: string;
  content: Uint8Array;
  description?: string;
}

/** A stored file: its id (for the model to name it) and the FileRef the turn's final response lists. */
export interface KeptFile {
  fileId: string;
  ref: FileRef;
}

/** Where a server tool stores what it produces (AGN-033 §6): every kept file is listed in the turn's `files[]`. */
export interface ServerToolFiles {
  /** The largest file `keep` accepts (`files.maxBytes`). */
  readonly maxBytes: number;
  /** Stores the file for the turn's principal; throws FileTooLargeError beyond `maxBytes`. */
  keep(file: ProducedFile): Promise<KeptFile>;
}

export interface ServerToolContext {
  principal: string;
  sessionId: string;
  turnId: string;
  /** The turn's mode: fixed for the whole reasoner loop (AGN-011 §4.7). */
  mode: string;
  /** The turn's workspace: the request's `workspaceId`, else the session's last one; none when neither names one. */
  workspaceId?: string;
  files: ServerToolFiles;
  /** Aborted when the tool has run longer than the server allows: stop the work, the turn has failed. */
  signal: AbortSignal;
}

/**
 * What a run answers the model. `result` is any JSON value, the call's output (and the final response's
 * `resultJson`); `errorMessage` is a failure the model should hear of and may work around (the call's error
 * output, and `errorMessage` in `toolResults`).
 */
export type ServerToolResult = { result: unknown } | { errorMessage: string };

export type ArgumentsCheck<A> = { ok: true; value: A } | { ok: false; message: string };

/**
 * A tool the server executes itself (AGN-027 D). Bad arguments are the model's mistake: `parseArguments`
 * answers why and the model sees it as the call's error output. `execute` throwing is the server's
 * failure and fails the turn (TOOL_FAILED).
 */
export interface ServerTool<A = unknown> {
  readonly definition: ToolDefinition;
  /**
   * `always`: a call of it runs only once the user approved it (docs/server-tools.md): the round hands the client an
   * `aptix_approve` call in its place. Default `never`.
   */
  readonly approval?: "always" | "never";
  /** The MCP server it comes from, named in the approval the user is asked for; none for a built-in. */
  readonly server?: string;
  parseArguments(args: unknown): ArgumentsCheck<A>;
  execute(args: A, context: ServerToolContext): Promise<ServerToolResult>;
}
