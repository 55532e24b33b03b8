import {
  CLIPBOARD_IMAGE_MIME_TYPES,
  fail,
  IdentifierSchema,
  type InvokeFailure,
  type InvokeResult,
  ok,
  type ToolCall,
  type ToolResult,
} from "@aptix/contracts";
import { APPROVAL_TOOL_NAME, assistantMessageId } from "./turn-ui-chunks.js";

/** The fields of a chat request's body besides `useChat`'s own that a user turn takes as they are. */
const USER_TURN_FIELDS = [
  "conversationContextId",
  "agentContextId",
  "workspaceId",
  "ragScope",
  "repo",
  "language",
] as const;
const CHAT_FIELDS = new Set(["id", "messages", "trigger", "messageId", ...USER_TURN_FIELDS]);

/** A UI message as a chat request carries it: only what the service reads of it is checked. */
interface ChatMessage {
  id: string;
  role: string;
  parts: Array<Record<string, unknown>>;
}

/**
 * What a `useChat` request asks for: a user turn (its body for the request validator, which judges it as it
 * judges every user turn) or the continuation of the turn awaiting tools, whose answers `toolResultsOf` reads
 * once the awaited calls are known.
 */
export type ChatRequest =
  | {
      type: "user_turn";
      sessionId: string;
      turnId: string;
      body: Record<string, unknown>;
      /** An edit: the turn of the user message it replaces, which the session is rewound before. */
      edits?: string;
    }
  /** Another answer to the session's last turn. */
  | { type: "regenerate"; sessionId: string }
  | { type: "continuation"; sessionId: string; turnId: string; message: ChatMessage; index: number };

/** VALIDATION_FAILED naming `path`, as every refusal of a request does. */
export function chatFieldError(path: string, message: string): InvokeFailure {
  return fail("VALIDATION_FAILED", `Invalid chat request: ${path === "" ? "the body" : path} ${message}.`, {
    fields: [{ path, message }],
  });
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Reads the body `DefaultChatTransport` posts (`{ id, messages, trigger, messageId?, …body }`): `id` is the
 * session, the last message is the request (the rest is the UI's copy of the conversation, which the session's
 * own replaces). A user message is a user turn with its id as `turnId`; an assistant message `<turnId>:a` is
 * that turn's continuation. `regenerate-message` answers the session's last turn again; a user message sent
 * with a `messageId` (useChat's edit) replaces that message's turn.
 */
export function readChatRequest(body: unknown): InvokeResult<ChatRequest> {
  if (!isRecord(body)) return chatFieldError("", "must be a JSON object");
  const unknown = Object.keys(body).find((key) => !CHAT_FIELDS.has(key));
  if (unknown !== undefined) return chatFieldError(unknown, "is not a field of a chat request");
  const id = IdentifierSchema.safeParse(body.id);
  if (!id.success)
    return chatFieldError("id", "must be 1–128 characters of letters, digits, '.', '_', ':' or '-'");
  const sessionId = id.data;
  if (body.trigger === "regenerate-message") return ok({ type: "regenerate", sessionId });
  if (body.trigger !== "submit-message") {
    return chatFieldError("trigger", 'must be "submit-message" or "regenerate-message"');
  }
  const { messages } = body;
  if (!Array.isArray(messages) || messages.length === 0)
    return chatFieldError("messages", "must hold at least one message");
  const index = messages.length - 1;
  const message = readMessage(messages[index], `messages[${index}]`);
  if (!message.successful) return message;
  const last = message.result;
  if (last.role === "user") {
    const edits = body.messageId === undefined ? undefined : IdentifierSchema.safeParse(body.messageId);
    if (edits?.success === false) {
      return chatFieldError("messageId", "must be 1–128 characters of letters, digits, '.', '_', ':' or '-'");
    }
    const turnId = IdentifierSchema.safeParse(last.id);
    if (!turnId.success)
      return chatFieldError(
        `messages[${index}].id`,
        "must be 1–128 characters of letters, digits, '.', '_', ':' or '-'",
      );
    const input = userInput(last, index);
    if (!input.successful) return input;
    const extra = Object.fromEntries(
      USER_TURN_FIELDS.filter((key) => key in body).map((key) => [key, body[key]]),
    );
    return ok({
      type: "user_turn",
      sessionId,
      turnId: turnId.data,
      body: { sessionId, turnId: turnId.data, ...input.result, ...extra, stream: true },
      ...(edits ? { edits: edits.data } : {}),
    });
  }
  const turnId = last.role === "assistant" && last.id.endsWith(":a") ? last.id.slice(0, -2) : undefined;
  if (turnId === undefined || assistantMessageId(turnId) !== last.id) {
    return chatFieldError(
      `messages[${index}]`,
      "must be a user message or the assistant message of the turn awaiting tools (id `<turnId>:a`)",
    );
  }
  return ok({ type: "continuation", sessionId, turnId, message: last, index });
}

function readMessage(value: unknown, path: string): InvokeResult<ChatMessage> {
  if (!isRecord(value)) return chatFieldError(path, "must be a UI message");
  if (typeof value.id !== "string") return chatFieldError(`${path}.id`, "must be a string");
  if (typeof value.role !== "string") return chatFieldError(`${path}.role`, "must be a string");
  if (!Array.isArray(value.parts) || !value.parts.every(isRecord)) {
    return chatFieldError(`${path}.parts`, "must be an array of message parts");
  }
  return ok({ id: value.id, role: value.role, parts: value.parts });
}

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;

/** A user message's text parts joined, its images as clipboard images, its other files as artifacts. */
function userInput(message: ChatMessage, index: number): InvokeResult<Record<string, unknown>> {
  const texts: string[] = [];
  const clipboardImages: Array<Record<string, string>> = [];
  const inputArtifacts: Array<Record<string, string>> = [];
  for (const [n, part] of message.parts.entries()) {
    const path = `messages[${index}].parts[${n}]`;
    if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
    if (part.type !== "file") continue;
    const data = typeof part.url === "string" ? DATA_URL.exec(part.url) : null;
    if (data === null) return chatFieldError(`${path}.url`, "must be a base64 data URL (the file's content)");
    const [, mimeType = "", dataBase64 = ""] = data;
    if ((CLIPBOARD_IMAGE_MIME_TYPES as readonly string[]).includes(mimeType)) {
      clipboardImages.push({ id: `image-${n}`, mimeType, dataBase64 });
    } else {
      const fileName = typeof part.filename === "string" ? part.filename : `file-${n}`;
      inputArtifacts.push({
        relativePath: fileName,
        fileName,
        contents: dataBase64,
        encoding: "base64",
        mimeType,
        origin: "user",
      });
    }
  }
  const text = texts.join("\n");
  return ok({
    ...(text === "" ? {} : { instruction: text }),
    ...(clipboardImages.length > 0 ? { clipboardImages } : {}),
    ...(inputArtifacts.length > 0 ? { inputArtifacts } : {}),
  });
}

/**
 * The answers of `awaited` (the calls the turn waits for, in their order) in the continuation's message, as
 * `addToolOutput` and `addToolApprovalResponse` leave them in the calls' parts: an output is `resultJson`, an
 * error `errorMessage`, an approval `{"approved":true}` or `{"approved":false,"message":…}`. A call without an
 * answer is refused, naming the message's parts.
 */
export function toolResultsOf(
  request: Extract<ChatRequest, { type: "continuation" }>,
  awaited: readonly ToolCall[],
): InvokeResult<ToolResult[]> {
  const results: ToolResult[] = [];
  const path = `messages[${request.index}].parts`;
  for (const call of awaited) {
    const part = request.message.parts.find((candidate) => candidate.toolCallId === call.toolCallId);
    const answer = part === undefined ? undefined : answerOf(part, call.name === APPROVAL_TOOL_NAME);
    if (answer === undefined)
      return chatFieldError(
        path,
        `has no answer for the awaited tool call ${JSON.stringify(call.toolCallId)}`,
      );
    results.push({ toolCallId: call.toolCallId, executionMs: 0, ...answer });
  }
  return ok(results);
}

function answerOf(
  part: Record<string, unknown>,
  approval: boolean,
): { resultJson: string } | { errorMessage: string } | undefined {
  if (approval) {
    const given = isRecord(part.approval) ? part.approval : undefined;
    if (part.state !== "approval-responded" && part.state !== "output-denied") return undefined;
    if (given?.approved === true) return { resultJson: JSON.stringify({ approved: true }) };
    const reason = typeof given?.reason === "string" ? given.reason : undefined;
    return {
      resultJson: JSON.stringify({ approved: false, ...(reason === undefined ? {} : { message: reason }) }),
    };
  }
  if (part.state === "output-available") return { resultJson: JSON.stringify(part.output ?? null) };
  if (part.state === "output-error") {
    const text = typeof part.errorText === "string" ? part.errorText.trim() : "";
    return { errorMessage: text === "" ? "The tool failed." : text };
  }
  return undefined;
}
