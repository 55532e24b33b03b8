import type { TranscriptItem } from "./transcript-item.js";

export interface LlmToolCall {
  callId: string;
  name: string;
  argumentsJson: string;
}

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
  reasoningTokens?: number;
}

/** `length`: the output hit the token limit; `content_filter`: the provider withheld output. */
export type LlmFinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "other";

/** What a call sent and got on the wire, for the turn's trace only (never shown to clients). */
export interface LlmCallTrace {
  providerRequest: unknown;
  /** The raw answer; for a failure, what is known of it (its status, the provider's request and response ids). */
  providerResponse: unknown;
}

/** One provider answer, normalized by its adapter. */
export interface LlmResponse {
  /** The provider's id for this response, when it stores responses (continuation point for the next call). */
  responseId?: string;
  /** What the model produced, in order, as it goes into the transcript. */
  output: TranscriptItem[];
  /** The assistant text of `output`, joined. */
  text: string;
  /** The function calls of `output`, in order. */
  toolCalls: LlmToolCall[];
  usage: LlmUsage;
  finishReason: LlmFinishReason;
  trace: LlmCallTrace;
}
