import { homedir } from "node:os";
import type { AgentContext } from "@agentclientprotocol/sdk";
import type { ApprovalRequest } from "@aptix/client";
import { visible } from "../terminal/visible.js";
import { ApprovalCall } from "../tools/approval-call.js";
import type { AcpSession } from "./acp-session.js";
import { askPermission, PERMISSION_OPTIONS } from "./acp-tools.js";
import { textContent, toolKindOf } from "./tool-call-view.js";

/**
 * `runTurn`'s `approve` in `aptix acp`: a server tool that asks first is shown as a pending `tool_call`, every
 * argument in its content (names sorted, long values cut), and asked about with `session/request_permission`
 * (allow once, allow for this session, reject). "Allow for this session" holds for that tool with the same
 * argument names for the rest of the ACP session, but never for a call whose arguments name a path outside the
 * workspace: that one is asked about every time. A dismissed dialog or a cancelled prompt declines.
 */
export function acpApprove(
  session: AcpSession,
  client: AgentContext,
  signal: AbortSignal,
): (request: ApprovalRequest) => Promise<boolean> {
  return async ({ tool, argumentsJson, server, toolCallId }) => {
    const title = server === null ? `Run ${tool}` : `Run ${tool} (MCP server ${server})`;
    const call = new ApprovalCall(tool, argumentsJson, [session.editorRoot, session.root.path], homedir());
    const outside =
      call.outsidePaths.length === 0
        ? []
        : [`Its arguments name ${call.outside}: asked every time, even after "allow for this session".`];
    // The model's text: its bidi and invisible characters shown as escapes, so the dialog reads as the call runs.
    const shown = visible(
      [...call.arguments.map(({ name, value }) => `${name}: ${value}`), ...outside].join("\n"),
    );
    const toolCall = {
      toolCallId,
      title,
      kind: toolKindOf(tool),
      rawInput: parsed(argumentsJson),
      content: [textContent(shown)],
    };
    await session.updates.send({ sessionUpdate: "tool_call", ...toolCall, status: "pending" });
    session.approvalsShown.add(toolCallId);
    let approved = outside.length === 0 && session.toolsApproved.has(call.alwaysKey);
    if (!approved) {
      const optionId = await askPermission(
        client,
        {
          sessionId: session.sessionId,
          toolCall: { ...toolCall, status: "pending" },
          options: [...PERMISSION_OPTIONS],
        },
        signal,
      );
      if (optionId === "allow_always") session.toolsApproved.add(call.alwaysKey);
      approved = optionId === "allow_once" || optionId === "allow_always";
    }
    // An approved call runs on the service: its result comes with the turn's final answer.
    await session.updates.send(
      approved
        ? { sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" }
        : {
            sessionUpdate: "tool_call_update",
            toolCallId,
            status: "failed",
            content: [textContent("Not approved: the model is told so.")],
          },
    );
    return approved;
  };
}

function parsed(argumentsJson: string): unknown {
  try {
    return JSON.parse(argumentsJson);
  } catch {
    return argumentsJson;
  }
}
