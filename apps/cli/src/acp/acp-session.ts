import type { TextFiles } from "../tools/text-files.js";
import type { WorkspaceRoot } from "../workspace/workspace-root.js";
import type { SessionUpdates } from "./session-updates.js";

/** The turn a prompt runs: cancelling the prompt aborts it (and the service's turn). */
interface RunningPrompt {
  turnId: string;
  controller: AbortController;
}

/** One ACP session: a service session in the workspace the editor named. */
export interface AcpSession {
  /** The service's `sessionId`, which the editor passes back to `session/load`. */
  sessionId: string;
  /** The workspace as the editor named it (`cwd`); its real path is `root.path`. */
  editorRoot: string;
  /** `cwd`'s id as the terminal agent gives it (docs: the folder's name and 8 hex digits of its real path's hash). */
  workspaceId: string;
  root: WorkspaceRoot;
  files: TextFiles;
  updates: SessionUpdates;
  /** The service's mode, as last reported to the editor. */
  modeId: string;
  modeDisplayName: string;
  /**
   * The user chose "allow always" on a patch: later patches of this ACP session are written without asking, but
   * those that change project hooks.
   */
  allowsEveryPatch: boolean;
  /**
   * The server tool calls the user allowed "for this session" when the service asked first
   * (`ApprovalCall.alwaysKey`: the tool and its argument names).
   */
  toolsApproved: Set<string>;
  /** The calls shown to the editor when their approval was asked: their results update those tool calls. */
  approvalsShown: Set<string>;
  running: RunningPrompt | undefined;
}
