import type { AgentContext, RequestPermissionResponse, ToolCallContent } from "@agentclientprotocol/sdk";
import type { ToolContext, ToolHandler } from "@aptix/client";
import { defaultClientTools } from "@aptix/contracts";
import { workspaceTools } from "../tools/workspace-tools.js";
import type { AcpSession } from "./acp-session.js";
import { diffContentsOf, textContent, toolKindOf, toolLocationsOf, toolTitleOf } from "./tool-call-view.js";

const PERMISSION_OPTIONS = [
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
      locations: toolLocationsOf(name, args, editorRoot),
      rawInput: args,
    });
    let diffs: ToolCallContent[] = [];
    const tools = workspaceTools(session.root, {
      files: session.files,
      confirm: async (_patch, changes) => {
        diffs = diffContentsOf(changes, editorRoot);
        return await allowed(session, client, context, diffs, signal);
      },
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

/**
 * Whether the user lets the patch be written: "allow always" holds for the rest of the ACP session. The editor's
 * dialog shows the call with its diffs. A cancel of the prompt while the dialog is open counts as a rejection.
 */
async function allowed(
  session: AcpSession,
  client: AgentContext,
  context: ToolContext,
  content: ToolCallContent[],
  signal: AbortSignal,
): Promise<boolean> {
  await session.updates.send({ sessionUpdate: "tool_call_update", toolCallId: context.toolCallId, content });
  if (session.allowsEveryPatch) return true;
  let answer: RequestPermissionResponse;
  try {
    answer = await client.request(
      "session/request_permission",
      {
        sessionId: session.sessionId,
        toolCall: {
          toolCallId: context.toolCallId,
          title: toolTitleOf(context.name, {}),
          kind: "edit",
          status: "pending",
          content,
        },
        options: [...PERMISSION_OPTIONS],
      },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
  } catch (error) {
    if (signal.aborted) return false;
    throw error;
  }
  if (answer.outcome.outcome !== "selected") return false;
  if (answer.outcome.optionId === "allow_always") session.allowsEveryPatch = true;
  return answer.outcome.optionId === "allow_once" || answer.outcome.optionId === "allow_always";
}
