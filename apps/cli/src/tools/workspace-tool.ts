import type { Deadline } from "../workspace/deadline.js";

/**
 * A tool run on the user's machine: the call's arguments and the deadline of its budget in, its result out (a
 * throw is the call's `errorMessage`). The same executors serve every front end of the CLI.
 */
export type WorkspaceTool = (args: Record<string, unknown>, deadline: Deadline) => Promise<unknown>;

/**
 * Told the workspace-relative paths a call opens, once `WorkspaceRoot` has confined them (never the model's raw
 * path): `aptix acp` shows them to the editor as the call's locations.
 */
export type Located = (paths: readonly string[]) => void;
