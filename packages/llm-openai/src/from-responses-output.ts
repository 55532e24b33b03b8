import {
  type LlmCallResult,
  type LlmFinishReason,
  type LlmResponse,
  type LlmToolCall,
  ok,
  type TranscriptItem,
} from "@aptix/core";
import type { Response } from "openai/resources/responses/responses";
import { openAIFailure, type ReceivedAnswer, reasonOf } from "./provider-error.js";

/**
 * Normalizes a Responses API answer; anything that is not a usable Response is a PROVIDER_ERROR, with the
 * status of the HTTP answer when `received` gives it (its request id and the body go in the trace).
 */
export function fromResponsesOutput(
  response: Response,
  providerRequest: unknown,
  received?: ReceivedAnswer,
): LlmCallResult {
  const failed = { providerRequest, received, body: response };
  if (typeof response !== "object" || response === null || !Array.isArray(response.output)) {
    return openAIFailure(
      "OpenAI answered with a body that is not a Response.",
      { reason: "malformed" },
      failed,
    );
  }
  if (response.status === "failed") {
    return openAIFailure(
      `OpenAI failed the response: ${response.error?.message ?? "no reason given"}`,
      {
        code: response.error?.code ?? null,
        ...(reasonOf(response.error?.code) ? { reason: reasonOf(response.error?.code) } : {}),
      },
      failed,
    );
  }
  const output: TranscriptItem[] = [];
  const toolCalls: LlmToolCall[] = [];
  let refused = false;
  for (const item of response.output) {
    if (item.type === "message") {
      const text = item.content
        .map((part) => {
          if (part.type === "refusal") refused = true;
          return part.type === "output_text" ? part.text : part.refusal;
        })
        .join("");
      output.push({ type: "assistant_message", text });
    } else if (item.type === "function_call") {
      const call = { callId: item.call_id, name: item.name, argumentsJson: item.arguments };
      toolCalls.push(call);
      output.push({ type: "function_call", ...call });
    } else if (item.type === "reasoning") {
      output.push({ type: "reasoning", provider: "openai", data: item });
    }
  }
  const usage = response.usage;
  const normalized: LlmResponse = {
    output,
    text: output.map((item) => (item.type === "assistant_message" ? item.text : "")).join(""),
    toolCalls,
    usage: {
      inputTokens: usage?.input_tokens ?? 0,
      outputTokens: usage?.output_tokens ?? 0,
      ...(usage?.input_tokens_details ? { cachedInputTokens: usage.input_tokens_details.cached_tokens } : {}),
      ...(usage?.output_tokens_details
        ? { reasoningTokens: usage.output_tokens_details.reasoning_tokens }
        : {}),
    },
    finishReason: finishReason(response, toolCalls.length > 0, refused),
    trace: { providerRequest, providerResponse: response },
  };
  if (typeof response.id === "string") normalized.responseId = response.id;
  return ok(normalized);
}

function finishReason(response: Response, calledTools: boolean, refused: boolean): LlmFinishReason {
  if (response.status === "incomplete") {
    const reason = response.incomplete_details?.reason;
    return reason === "max_output_tokens"
      ? "length"
      : reason === "content_filter"
        ? "content_filter"
        : "other";
  }
  if (refused) return "content_filter";
  return calledTools ? "tool_calls" : "stop";
}
