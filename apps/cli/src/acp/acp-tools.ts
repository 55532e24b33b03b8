import type {
  AgentContext,
  RequestPermissionRequest,
  RequestPermissionResponse,
  ToolCallContent,
} from "@agentclientprotocol/sdk";
import type { ToolContext, ToolHandler } from "@aptix/client";
import { defaultClientTools } from "@aptix/contracts";
import { workspaceTools } from "../tools/workspace-tools.js";
import type { AcpSession } from "./acp-session.js";
import { diffContentsOf, locationsOf, textContent, toolKindOf, toolTitleOf } from "./tool-call-view.js";

export const PERMISSION_OPTIONS = [
  { optionId: "allow_once", name: "Allow", kind: "allow_once" },
  { optionId: "allow_always", name: "Allow for this session", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
] as const;

/**
 * The default catalog's client tools as `aptix acp` runs them for one turn: each call is shown to the editor as a
 * `tool_call` (its kind, title and arguments), run by the shared executors under the session's `WorkspaceRoot`,
 * and ended with a `tool_call_update` (`completed`, or `failed` with the reason). A patch is planned first, its
 * changes shown as `diff` contents, and written only once the user allows it (`session/request_permission`).
 * `signal` is the prompt's: a cancel while the editor asks counts as a rejection.
 */
export function acpTools(
  session: AcpSession,
  client: AgentContext,
  signal: AbortSignal,
): Record<string, ToolHandler> {
  return Object.fromEntries(
    defaultClientTools.map((tool) => [tool.name, acpTool(tool.name, session, client, signal)]),
  );
}

function acpTool(name: string, session: AcpSession, client: AgentContext, signal: AbortSignal): ToolHandler {
  return async (args, context) => {
    const { updates, editorRoot } = session;
    const { toolCallId } = context;
    await updates.send({
      sessionUpdate: "tool_call",
      toolCallId,
      title: toolTitleOf(name, args),
      kind: toolKindOf(name),
      status: "pending",
      rawInput: args,
    });
    let diffs: ToolCallContent[] = [];
    const tools = workspaceTools(session.root, {
      files: session.files,
      confirm: async ({ changes, projectHooks }) => {
        diffs = diffContentsOf(changes, editorRoot);
        return await allowed({ session, client, context, content: diffs, projectHooks, signal });
      },
      // Only now, confined: the editor may open a location, and the model's raw path could name any file.
      located: (paths) =>
        void updates.send({
          sessionUpdate: "tool_call_update",
          toolCallId,
          locations: locationsOf(paths, editorRoot),
        }),
    });
    const run = tools[name];
    if (run === undefined) throw new Error(`This client has no tool named ${name}.`);
    await updates.send({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
    try {
      const value = await run(args);
      await updates.send({
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: "completed",
        content: diffs,
        rawOutput: value,
      });
      return value;
    } catch (error) {
      const message = (error as Error).message;
      await updates.send({
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: "failed",
        content: [...diffs, textContent(message)],
        rawOutput: { error: message },
      });
      throw error;
    }
  };
}

interface PermissionRequest {
  session: AcpSession;
  client: AgentContext;
  context: ToolContext;
  /** The patch's changes as diffs: the dialog shows them. */
  content: ToolCallContent[];
  /** The changed files that run code when the project is opened: asked about every time. */
  projectHooks: readonly string[];
  signal: AbortSignal;
}

/**
 * Whether the user lets the patch be written: "allow always" holds for the rest of the ACP session, but for a
 * patch that changes a project hook, which is asked about every time, and offered no "always". The editor's
 * dialog shows the call with its diffs. A cancel of the prompt while the dialog is open counts as a rejection.
 */
async function allowed(request: PermissionRequest): Promise<boolean> {
  const { session, client, context, content, projectHooks, signal } = request;
  await session.updates.send({ sessionUpdate: "tool_call_update", toolCallId: context.toolCallId, content });
  const hooks = projectHooks.length > 0;
  if (session.allowsEveryPatch && !hooks) return true;
  const optionId = await askPermission(
    client,
    {
      sessionId: session.sessionId,
      toolCall: {
        toolCallId: context.toolCallId,
        title: hooks
          ? `Apply a patch to files that run code when the project is opened (${projectHooks.join(", ")})`
          : toolTitleOf(context.name, {}),
        kind: "edit",
        status: "pending",
        content,
      },
      options: PERMISSION_OPTIONS.filter((option) => !hooks || option.kind !== "allow_always"),
    },
    signal,
  );
  if (optionId === "allow_always" && !hooks) session.allowsEveryPatch = true;
  return optionId === "allow_once" || (optionId === "allow_always" && !hooks);
}

/**
 * Asks the editor (`session/request_permission`) and answers the option the user picked; none when the dialog
 * was dismissed or the prompt cancelled meanwhile.
 */
export async function askPermission(
  client: AgentContext,
  params: RequestPermissionRequest,
  signal: AbortSignal,
): Promise<string | undefined> {
  let answer: RequestPermissionResponse;
  try {
    answer = await client.request("session/request_permission", params, {
      cancellationSignal: signal,
      stopWaitingOnCancel: true,
    });
  } catch (error) {
    if (signal.aborted) return undefined;
    throw error;
  }
  return answer.outcome.outcome === "selected" ? answer.outcome.optionId : undefined;
}
