import type { ContentPart, TranscriptItem } from "@aptix/core";
import type {
  ResponseInputItem,
  ResponseInputMessageContentList,
} from "openai/resources/responses/responses";

/** Transcript items in the Responses API's input format (docs/wire-mapping.md). */
export function toResponsesInput(
  items: readonly TranscriptItem[],
  options: { replay: boolean },
): ResponseInputItem[] {
  return items.flatMap((item) => toInputItems(item, options.replay));
}

function toInputItems(item: TranscriptItem, replay: boolean): ResponseInputItem[] {
  switch (item.type) {
    case "system_message":
      return [{ role: "system", content: [{ type: "input_text", text: item.text }] }];
    case "user_message":
      return [{ role: "user", content: item.content.map(toContentPart) }];
    case "assistant_message":
      return [{ role: "assistant", content: item.text }];
    case "function_call":
      return [
        { type: "function_call", call_id: item.callId, name: item.name, arguments: item.argumentsJson },
      ];
    case "function_call_output":
      // The Responses API has no error flag on outputs: an error travels as a JSON object the model can read.
      return [
        {
          type: "function_call_output",
          call_id: item.callId,
          output: item.isError ? JSON.stringify({ error: item.output }) : item.output,
        },
      ];
    case "reasoning":
      return reasoningInput(item.provider, item.data, replay);
  }
}

/**
 * Reasoning items go back only to OpenAI, and on a replay only when they carry their encrypted content:
 * a bare id points at stored state that may be gone (that is why the replay happens).
 */
function reasoningInput(provider: string, data: unknown, replay: boolean): ResponseInputItem[] {
  if (provider !== "openai" || typeof data !== "object" || data === null) return [];
  const item = data as { encrypted_content?: unknown };
  if (replay && typeof item.encrypted_content !== "string") return [];
  const { status: _status, ...reasoning } = data as Record<string, unknown>;
  return [reasoning as unknown as ResponseInputItem];
}

function toContentPart(part: ContentPart): ResponseInputMessageContentList[number] {
  switch (part.type) {
    case "text":
      return { type: "input_text", text: part.text };
    case "image":
      return {
        type: "input_image",
        detail: "auto",
        image_url: `data:${part.mimeType};base64,${part.dataBase64}`,
      };
    case "file":
      return {
        type: "input_file",
        filename: part.fileName,
        file_data: `data:${part.mimeType};base64,${part.dataBase64}`,
      };
  }
}
