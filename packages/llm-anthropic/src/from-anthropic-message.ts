import type { Message, Usage } from "@anthropic-ai/sdk/resources/messages";
import {
  fail,
  type InvokeResult,
  type LlmFinishReason,
  type LlmResponse,
  type LlmToolCall,
  type LlmUsage,
  ok,
  type TranscriptItem,
} from "@aptix/core";

/**
 * Normalizes a Messages API answer; anything that is not a usable Message is a PROVIDER_ERROR. The message
 * id stays in the trace only: Anthropic keeps no conversation state, so there is no `responseId` to continue
 * from.
 */
export function fromAnthropicMessage(message: Message, providerRequest: unknown): InvokeResult<LlmResponse> {
  if (typeof message !== "object" || message === null || !Array.isArray(message.content)) {
    return fail("PROVIDER_ERROR", "Anthropic answered with a body that is not a Message.", {
      provider: "anthropic",
      reason: "malformed",
    });
  }
  const output: TranscriptItem[] = [];
  const toolCalls: LlmToolCall[] = [];
  for (const block of message.content) {
    if (block.type === "text") {
      output.push({ type: "assistant_message", text: block.text });
    } else if (block.type === "tool_use") {
      const call = { callId: block.id, name: block.name, argumentsJson: JSON.stringify(block.input ?? {}) };
      toolCalls.push(call);
      output.push({ type: "function_call", ...call });
    } else if (block.type === "thinking" || block.type === "redacted_thinking") {
      // Kept verbatim: Claude wants its thinking blocks back unchanged (signature included) on later calls.
      output.push({ type: "reasoning", provider: "anthropic", data: block });
    }
    // Server tool blocks (web search, code execution, …) are not offered by this adapter and are skipped.
  }
  return ok({
    output,
    text: output.map((item) => (item.type === "assistant_message" ? item.text : "")).join(""),
    toolCalls,
    usage: usageOf(message.usage),
    finishReason: finishReason(message.stop_reason),
    trace: { providerRequest, providerResponse: message },
  });
}

/**
 * Anthropic counts cache reads and cache writes apart from `input_tokens`; the normalized `inputTokens` is
 * everything the prompt cost (as OpenAI counts it), with the cache reads also reported as `cachedInputTokens`.
 */
export function usageOf(usage: Partial<Usage> | null | undefined): LlmUsage {
  const cacheRead = usage?.cache_read_input_tokens;
  const cacheWrite = usage?.cache_creation_input_tokens ?? 0;
  const normalized: LlmUsage = {
    inputTokens: (usage?.input_tokens ?? 0) + cacheWrite + (cacheRead ?? 0),
    outputTokens: usage?.output_tokens ?? 0,
  };
  if (typeof cacheRead === "number") normalized.cachedInputTokens = cacheRead;
  const thinking = usage?.output_tokens_details?.thinking_tokens;
  if (typeof thinking === "number") normalized.reasoningTokens = thinking;
  return normalized;
}

export function finishReason(stopReason: string | null | undefined): LlmFinishReason {
  switch (stopReason) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
    // The conversation filled the context window: the answer was cut off just as at `max_tokens`.
    case "model_context_window_exceeded":
      return "length";
    case "refusal":
      return "content_filter";
    default:
      // `pause_turn` (a server tool paused the turn) and anything newer.
      return "other";
  }
}
