import type { Deadline } from "../workspace/deadline.js";

/**
 * A tool run on the user's machine: the call's arguments and the deadline of its budget in, its result out (a
 * throw is the call's `errorMessage`). The same executors serve every front end of the CLI.
 */
export type WorkspaceTool = (args: Record<string, unknown>, deadline: Deadline) => Promise<unknown>;
