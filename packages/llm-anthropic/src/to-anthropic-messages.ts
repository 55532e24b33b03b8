import type {
  Base64ImageSource,
  ContentBlockParam,
  MessageParam,
  ToolResultBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import type { ContentPart, TranscriptItem } from "@aptix/core";

/** The conversation part of a Messages API request: the top-level `system` and the `messages`. */
export interface AnthropicConversation {
  /** Every system message of the transcript, joined with blank lines; absent when there is none. */
  system?: string;
  messages: AnthropicMessageParam[];
}

/** A `user` or `assistant` message: the adapter never writes `system` role messages. */
type AnthropicMessageParam = Extract<MessageParam, { role: "user" | "assistant" }> & {
  content: ContentBlockParam[];
};

/** The image types the Messages API takes in an `image` block. */
const IMAGE_MEDIA_TYPES: ReadonlySet<string> = new Set([
  "image/jpeg",
  "image/png",
  "image/gif",
  "image/webp",
]);

/**
 * Transcript items in the Messages API's format (docs/wire-mapping.md):
 * - every `system_message` goes to the top-level `system` string, never into `messages`;
 * - consecutive items of one role share one message (the API wants user and assistant turns to alternate);
 * - a `function_call` is an assistant `tool_use` block, its output a `tool_result` block that comes before
 *   every other block of the next user message, as the API requires;
 * - `reasoning` items of Anthropic go back as their original `thinking` / `redacted_thinking` blocks, other
 *   providers' reasoning is dropped.
 */
export function toAnthropicMessages(items: readonly TranscriptItem[]): AnthropicConversation {
  const system: string[] = [];
  const messages: AnthropicMessageParam[] = [];

  const append = (role: "user" | "assistant", blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: [...blocks] });
  };
  const appendToolResult = (block: ToolResultBlockParam) => {
    const last = messages.at(-1);
    if (last?.role !== "user") {
      messages.push({ role: "user", content: [block] });
      return;
    }
    // After the tool results already there, before any text, image or document of the message.
    const firstOther = last.content.findIndex((existing) => existing.type !== "tool_result");
    if (firstOther === -1) last.content.push(block);
    else last.content.splice(firstOther, 0, block);
  };

  for (const item of items) {
    switch (item.type) {
      case "system_message":
        if (item.text.length > 0) system.push(item.text);
        break;
      case "user_message":
        append("user", item.content.flatMap(toContentBlocks));
        break;
      case "assistant_message":
        if (hasText(item.text)) append("assistant", [{ type: "text", text: item.text }]);
        break;
      case "function_call":
        append("assistant", [
          { type: "tool_use", id: item.callId, name: item.name, input: toolInput(item.argumentsJson) },
        ]);
        break;
      case "function_call_output":
        appendToolResult({
          type: "tool_result",
          tool_use_id: item.callId,
          content: item.output,
          is_error: item.isError,
        });
        break;
      case "reasoning": {
        const block = reasoningBlock(item.provider, item.data);
        if (block) append("assistant", [block]);
        break;
      }
    }
  }
  const conversation: AnthropicConversation = { messages };
  if (system.length > 0) conversation.system = system.join("\n\n");
  return conversation;
}

/**
 * The API rejects empty and whitespace-only text blocks ("text content blocks must be non-empty", "… must
 * contain non-whitespace text"), and Claude sometimes answers a bare line break before a tool call: such
 * texts carry nothing and are left out.
 */
function hasText(text: string): boolean {
  return text.trim().length > 0;
}

/**
 * A tool call's arguments as the object `tool_use.input` must be. Arguments that came from Claude are the
 * `JSON.stringify` of an object already; anything else (not JSON, or not an object) is kept as text under
 * `arguments` rather than lost.
 */
function toolInput(argumentsJson: string): Record<string, unknown> {
  if (argumentsJson.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(argumentsJson);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // not JSON: kept as text below
  }
  return { arguments: argumentsJson };
}

/** Anthropic's own thinking blocks, kept verbatim; anything else (another provider's reasoning) is dropped. */
function reasoningBlock(provider: string, data: unknown): ContentBlockParam | undefined {
  if (provider !== "anthropic" || data === null || typeof data !== "object") return undefined;
  const block = data as { type?: unknown; thinking?: unknown; signature?: unknown; data?: unknown };
  if (
    block.type === "thinking" &&
    typeof block.thinking === "string" &&
    typeof block.signature === "string"
  ) {
    return { type: "thinking", thinking: block.thinking, signature: block.signature };
  }
  if (block.type === "redacted_thinking" && typeof block.data === "string") {
    return { type: "redacted_thinking", data: block.data };
  }
  return undefined;
}

function toContentBlocks(part: ContentPart): ContentBlockParam[] {
  switch (part.type) {
    case "text":
      return hasText(part.text) ? [{ type: "text", text: part.text }] : [];
    case "image":
      if (IMAGE_MEDIA_TYPES.has(part.mimeType)) {
        return [
          {
            type: "image",
            source: {
              type: "base64",
              media_type: part.mimeType as Base64ImageSource["media_type"],
              data: part.dataBase64,
            },
          },
        ];
      }
      // An image type the API cannot take (SVG, BMP, …) travels like any other file.
      return [fileBlock("An image", part.mimeType, part.dataBase64)];
    case "file":
      if (part.mimeType === "application/pdf") {
        return [
          {
            type: "document",
            source: { type: "base64", media_type: "application/pdf", data: part.dataBase64 },
            title: part.fileName,
          },
        ];
      }
      return [fileBlock(`File ${part.fileName}`, part.mimeType, part.dataBase64)];
  }
}

/**
 * A file that is not a PDF as a content block. The Messages API has no block for other file types (its
 * documents take PDF or plain text only), so the file travels as a `text` block that names it and holds its
 * content when it decodes as UTF-8 text (source code, JSON, CSV, …); a binary file cannot be shown to the
 * model, so it gets a note saying that it was attached instead.
 */
function fileBlock(label: string, mimeType: string, dataBase64: string): ContentBlockParam {
  const bytes = Buffer.from(dataBase64, "base64");
  const text = decodeText(bytes);
  if (text !== undefined) return { type: "text", text: `${label} (${mimeType}):\n\n${text}` };
  return {
    type: "text",
    text: `${label} (${mimeType}, ${bytes.length} bytes) was attached. It is a binary file, so its content cannot be shown here.`,
  };
}

/** The bytes as text when they are valid UTF-8 without NUL or other control characters typical of binaries. */
function decodeText(bytes: Buffer): string | undefined {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  // Tab, line feed, form feed and carriage return are text; other C0 controls mark a binary file.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point
  if (/[\u0000-\u0008\u000B\u000E-\u001F\u007F]/.test(text)) return undefined;
  return text;
}
