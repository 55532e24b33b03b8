import type { SessionMessagesJson } from "@aptix/client";
import type { FileRef } from "@aptix/contracts";
import type { SessionUpdates } from "./session-updates.js";
import { textContent, toolKindOf, toolTitleOf } from "./tool-call-view.js";

type SessionMessage = SessionMessagesJson["messages"][number];

/**
 * Replays one message of the session's conversation (`GET …/messages`) as `session/update`s, as `session/load`
 * must: the user's instruction as a `user_message_chunk`; the assistant's tool calls as `tool_call`s with their
 * final status and result, then its answer and files as `agent_message_chunk`s; a failed or cancelled turn's
 * reason in place of an answer. Tool calls are named `<turnId>/<n>`: the view keeps no call ids.
 */
export async function replayMessage(message: SessionMessage, updates: SessionUpdates): Promise<void> {
  if (message.role === "user") {
    if (message.text)
      await updates.send({
        sessionUpdate: "user_message_chunk",
        content: { type: "text", text: message.text },
      });
    return;
  }
  for (const [index, call] of (message.toolCalls ?? []).entries()) {
    const args = jsonObjectOf(call.argumentsJson);
    const failed = call.errorMessage !== undefined;
    await updates.send({
      sessionUpdate: "tool_call",
      toolCallId: `${message.turnId}/${index + 1}`,
      title: toolTitleOf(call.name, args),
      kind: toolKindOf(call.name),
      status: failed ? "failed" : "completed",
      rawInput: args,
      content: failed ? [textContent(call.errorMessage ?? "")] : [],
      ...(call.resultJson === undefined ? {} : { rawOutput: jsonObjectOf(call.resultJson) }),
    });
  }
  if (message.text) await updates.text(message.text);
  await sendFiles(message.files ?? [], updates);
  if (message.error) await updates.text(`The turn ended without an answer: ${message.error.message}`);
}

/** Files a server tool produced, as resource links the editor can open. */
export async function sendFiles(files: readonly FileRef[], updates: SessionUpdates): Promise<void> {
  for (const file of files) {
    await updates.send({
      sessionUpdate: "agent_message_chunk",
      content: {
        type: "resource_link",
        uri: file.url,
        name: file.name,
        mimeType: file.mimeType,
        size: file.sizeBytes,
        ...(file.description ? { description: file.description } : {}),
      },
    });
  }
}

/** A call's JSON text as a value (the text itself when it is not JSON). */
function jsonObjectOf(json: string): Record<string, unknown> {
  try {
    const value = JSON.parse(json) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { value };
  } catch {
    return { text: json };
  }
}
