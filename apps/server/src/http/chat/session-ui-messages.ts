import type {
  AgentExecuteRequest,
  AgentExecuteResponse,
  InvokeResult,
  SessionMessage,
  TurnEvent,
} from "@aptix/contracts";
import type { UIMessage, UIMessageChunk } from "ai";
import { jsonValue } from "./json-value.js";
import { assistantMessageId, TurnUiChunks } from "./turn-ui-chunks.js";

/** A round of a turn as its trace keeps it: the request, and its answer once it has one. */
interface ChatRound {
  request: AgentExecuteRequest;
  result?: InvokeResult<AgentExecuteResponse>;
}

/** The turn of a session that has not ended: its assistant message is built from its rounds, ids and all. */
export interface OpenTurn {
  turnId: string;
  status: "running" | "awaiting_client_tools";
  rounds: readonly ChatRound[];
}

/**
 * A session's conversation (its messages, oldest first) as `UIMessage[]`, the initial messages of `useChat`: a
 * user message per turn (id: the turn's), and its assistant message (`<turnId>:a`) with the turn's tool calls,
 * answer, files, or why it has none (`data-aptix-error`). A turn awaiting tools answers its calls with their
 * ids, so the UI can answer them; a running turn has no assistant message yet, since resuming its stream
 * replays it from the start.
 */
export async function sessionUiMessages(input: {
  sessionId: string;
  messages: readonly SessionMessage[];
  open?: OpenTurn;
}): Promise<UIMessage[]> {
  const { sessionId, open } = input;
  const messages: UIMessage[] = [];
  for (const message of input.messages) {
    const { turnId } = message;
    if (message.role === "user") {
      messages.push({ id: turnId, role: "user", parts: [{ type: "text", text: message.text ?? "" }] });
    } else if (open?.turnId !== turnId) {
      messages.push(endedAnswer(sessionId, message));
    } else if (open.status === "awaiting_client_tools") {
      messages.push(await awaitingAnswer(open));
    }
  }
  return messages;
}

/** An ended turn's assistant message: its tool calls (named by their place, which the UI never answers). */
function endedAnswer(sessionId: string, message: SessionMessage): UIMessage {
  const { turnId } = message;
  const parts: UIMessage["parts"] = [{ type: "step-start" }];
  for (const [n, call] of (message.toolCalls ?? []).entries()) {
    const common = { toolCallId: `${turnId}:${n}`, input: jsonValue(call.argumentsJson) };
    const type = `tool-${call.name}` as const;
    if (call.resultJson !== undefined) {
      parts.push({ type, ...common, state: "output-available", output: jsonValue(call.resultJson) });
    } else if (call.errorMessage !== undefined) {
      parts.push({ type, ...common, state: "output-error", errorText: call.errorMessage });
    }
  }
  if (message.text !== undefined && message.text !== "") {
    parts.push({ type: "text", text: message.text, state: "done" });
  }
  for (const file of message.files ?? [])
    parts.push({ type: "file", url: file.url, mediaType: file.mimeType });
  if (message.error !== undefined) parts.push({ type: "data-aptix-error", data: message.error });
  return { id: assistantMessageId(turnId), role: "assistant", metadata: { sessionId, turnId }, parts };
}

/** The assistant message of a turn awaiting tools, as its stream made it: its rounds replayed. */
async function awaitingAnswer(open: OpenTurn): Promise<UIMessage> {
  const chunks = new TurnUiChunks(open.turnId, open.rounds);
  const parts: UIMessageChunk[] = [...chunks.start()];
  for (const [round, { result }] of open.rounds.entries()) {
    if (result === undefined) continue;
    for (const event of roundEvents(round, result)) parts.push(...chunks.event(event));
  }
  let message: UIMessage = { id: assistantMessageId(open.turnId), role: "assistant", parts: [] };
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
  // Loaded when first needed, as the chat routes load the AI SDK.
  const { readUIMessageStream } = await import("ai");
  for await (const snapshot of readUIMessageStream({ stream })) message = snapshot;
  return message;
}

/** A round's answer as its stream's events: its text as one delta, then its result. */
function roundEvents(round: number, result: InvokeResult<AgentExecuteResponse>): TurnEvent[] {
  const answer = result.successful ? result.result : undefined;
  const text = answer?.kind === "client_tool_continuation" ? answer.toolContinuationMessage : undefined;
  return [
    ...(text === undefined || text === ""
      ? []
      : [{ id: `${round}-0`, event: "output_text.delta" as const, data: { delta: text } }]),
    { id: `${round}-result`, event: "result", data: result },
  ];
}
