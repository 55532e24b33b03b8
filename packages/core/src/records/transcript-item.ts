/**
 * Provider-neutral conversation items. Composition writes them, adapters translate them to their wire
 * format, and the store keeps them in order so a provider without server-side state can be replayed.
 */
export type TranscriptItem =
  | SystemMessageItem
  | UserMessageItem
  | AssistantMessageItem
  | FunctionCallItem
  | FunctionCallOutputItem
  | ReasoningItem;

/** The boot prompt (and the first mode's instructions), sent once at the start of a session. */
export interface SystemMessageItem {
  type: "system_message";
  text: string;
}

export interface UserMessageItem {
  type: "user_message";
  content: ContentPart[];
}

interface AssistantMessageItem {
  type: "assistant_message";
  text: string;
}

interface FunctionCallItem {
  type: "function_call";
  callId: string;
  name: string;
  argumentsJson: string;
}

export interface FunctionCallOutputItem {
  type: "function_call_output";
  callId: string;
  /** The tool's JSON result, or its error message when `isError`. */
  output: string;
  isError: boolean;
}

/** Provider-specific reasoning state (e.g. an OpenAI `reasoning` item) kept verbatim for replay to the same provider. */
interface ReasoningItem {
  type: "reasoning";
  provider: string;
  data: unknown;
}

export type ContentPart = TextPart | ImagePart | FilePart;

interface TextPart {
  type: "text";
  text: string;
}

interface ImagePart {
  type: "image";
  mimeType: string;
  dataBase64: string;
}

interface FilePart {
  type: "file";
  fileName: string;
  mimeType: string;
  dataBase64: string;
}
