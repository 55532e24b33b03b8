import type { ArgumentsCheck, ServerTool } from "../ports/server-tool.js";
import type { ModeCatalog } from "./mode-catalog.js";

/** TUL-007: always offered, whatever the mode (AGN-011 §4.2). */
export const CHANGE_MODE_TOOL_NAME = "agent_change_mode";

export interface ChangeModeArguments {
  mode: string;
  reason: string;
  /** Surfaced only; new-session branching is out of scope (AGN-011 §5.6). */
  branch: boolean;
}

export interface ChangeModeResult {
  mode: string;
  displayName: string;
  /** The new mode's instructions reach the model as the tool's output, so they apply from the next call. */
  instructions: string;
  reason: string;
  branch: boolean;
}

/**
 * The tool only checks and describes the switch; the Reasoner applies it (AGN-027 E), persisting the mode
 * and its ModeHistory entry at once.
 */
export function createChangeModeTool(modes: ModeCatalog): ServerTool<ChangeModeArguments> {
  return {
    definition: {
      name: CHANGE_MODE_TOOL_NAME,
      description:
        "Switch this session to another mode when the user's work moves to a different phase. " +
        "The new mode's tools become available from the next user turn.",
      parameters: {
        type: "object",
        properties: {
          mode: { type: "string", enum: modes.ids, description: "The id of the mode to switch to." },
          reason: { type: "string", description: "Why the switch helps the user, in one sentence." },
          branch: { type: "boolean", description: "Whether the work should continue in a new session." },
        },
        required: ["mode", "reason", "branch"],
        additionalProperties: false,
      },
      strict: true,
    },
    parseArguments(args: unknown): ArgumentsCheck<ChangeModeArguments> {
      if (typeof args !== "object" || args === null || Array.isArray(args)) {
        return { ok: false, message: "arguments must be an object with mode, reason and branch" };
      }
      const { mode, reason, branch } = args as Record<string, unknown>;
      if (typeof mode !== "string" || !modes.has(mode)) {
        return {
          ok: false,
          message: `mode must be one of ${modes.ids.map((id) => JSON.stringify(id)).join(", ")}`,
        };
      }
      if (typeof reason !== "string") return { ok: false, message: "reason must be a string" };
      // Required like the strict schema says: a provider without strict mode may leave it out.
      if (typeof branch !== "boolean") return { ok: false, message: "branch must be a boolean" };
      return { ok: true, value: { mode, reason, branch } };
    },
    async execute(args) {
      const mode = modes.get(args.mode);
      const result: ChangeModeResult = {
        mode: mode.id,
        displayName: mode.displayName,
        instructions: mode.instructions,
        reason: args.reason,
        branch: args.branch,
      };
      return { result };
    },
  };
}
