/** Builds Messages API wire objects (a `Message`, its stream events) from a scripted reply. */
import { randomBytes } from "node:crypto";
import type { ContentBlock, Message, StopReason, Usage } from "@anthropic-ai/sdk/resources/messages";
import type { PlannedSseEvent } from "../scripted/sse-writer.js";
import { joinedText, jsonChunks, StreamPlan, wordChunks } from "../scripted/stream-plan.js";
import type { AnthropicCacheUsage } from "./cache-usage.js";
import { countAnthropicOutputTokens } from "./context-tokens.js";
import type { AnthropicReplyStep, AnthropicStreamEvent, AnthropicUsageSpec } from "./script.js";

/** A request body as far as the harness reads it. */
export type AnthropicRequestBody = Record<string, unknown>;

type AnthropicIdFactory = (prefix: "msg" | "toolu") => string;

/** A stream event and the pause before writing it. */
export type PlannedAnthropicEvent = PlannedSseEvent<AnthropicStreamEvent>;

function signature(): string {
  return randomBytes(48).toString("base64");
}

/** The content blocks of a reply: thinking, then text, then `tool_use` (the real API's order). */
function buildContent(stepObject: AnthropicReplyStep, id: AnthropicIdFactory): ContentBlock[] {
  if (stepObject.content) return structuredClone(stepObject.content);
  const content: ContentBlock[] = [];
  for (const spec of stepObject.thinking ?? []) {
    if ("redactedData" in spec) content.push({ type: "redacted_thinking", data: spec.redactedData });
    else
      content.push({ type: "thinking", thinking: spec.thinking, signature: spec.signature ?? signature() });
  }
  const text = joinedText(stepObject.text);
  if (text !== undefined) content.push({ type: "text", text, citations: null });
  for (const use of stepObject.toolUses ?? []) {
    content.push({
      type: "tool_use",
      id: use.id ?? id("toolu"),
      name: use.name,
      input: use.input ?? {},
      caller: { type: "direct" },
    });
  }
  return content;
}

/**
 * The usage of a reply: the scripted input counts when the step gives any (the others 0, `input_tokens` the
 * request's context tokens), else the cache's split of the context tokens; the output tokens scripted or counted.
 */
function usageFor(
  spec: AnthropicUsageSpec | undefined,
  context: MessageContext,
  content: ContentBlock[],
): Usage {
  const scripted =
    spec?.input_tokens !== undefined ||
    spec?.cache_creation_input_tokens !== undefined ||
    spec?.cache_read_input_tokens !== undefined;
  const cacheCreation = spec?.cache_creation_input_tokens ?? 0;
  const input = scripted
    ? {
        input_tokens: spec?.input_tokens ?? context.contextTokens,
        cache_creation_input_tokens: cacheCreation,
        cache_read_input_tokens: spec?.cache_read_input_tokens ?? 0,
        cache_creation: { ephemeral_5m_input_tokens: cacheCreation, ephemeral_1h_input_tokens: 0 },
      }
    : context.cache;
  return {
    ...input,
    output_tokens: spec?.output_tokens ?? countAnthropicOutputTokens(content),
    output_tokens_details: spec?.output_tokens_details ?? null,
    server_tool_use: null,
    service_tier: "standard",
    inference_geo: null,
    speed: null,
  };
}

/** How a Message is made: ids, the model named when the request names none, the request's context tokens. */
export interface MessageContext {
  id: AnthropicIdFactory;
  defaultModel: string;
  /** The usage's `input_tokens` when the step scripts other input counts only. */
  contextTokens: number;
  /** The usage's input counts unless the step scripts them. */
  cache: AnthropicCacheUsage;
}

/** The Message for a reply to `body`. */
export function buildMessage(
  stepObject: AnthropicReplyStep,
  body: AnthropicRequestBody,
  context: MessageContext,
): Message {
  const { id, defaultModel } = context;
  const content = buildContent(stepObject, id);
  const stopReason: StopReason =
    stepObject.stopReason ?? (content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn");
  const message = {
    id: stepObject.id ?? id("msg"),
    type: "message",
    role: "assistant",
    model: stepObject.model ?? (typeof body.model === "string" ? body.model : defaultModel),
    content,
    stop_reason: stopReason,
    stop_sequence: stopReason === "stop_sequence" ? (stepObject.stopSequence ?? null) : null,
    stop_details: null,
    usage: usageFor(stepObject.usage, context, content),
    container: null,
    diagnostics: null,
    ...stepObject.overrides,
  };
  return message as Message;
}

/**
 * The `text/event-stream` events for a reply, in the order the real API sends them: `message_start` (the
 * message with no content yet), `ping`, per block `content_block_start` / `content_block_delta`… /
 * `content_block_stop`, then `message_delta` (stop reason and final usage) and `message_stop`.
 */
export function planStream(stepObject: AnthropicReplyStep, final: Message): PlannedAnthropicEvent[] {
  const plan = new StreamPlan<AnthropicStreamEvent>(stepObject.chunkDelayMs);
  const push = (event: AnthropicStreamEvent, isDelta = false) => plan.push(event, isDelta);

  push({
    type: "message_start",
    message: {
      ...final,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      usage: { ...final.usage, output_tokens: 1 },
    },
  });
  push({ type: "ping" });

  final.content.forEach((block, index) => {
    switch (block.type) {
      case "text": {
        push({ type: "content_block_start", index, content_block: { ...block, text: "" } });
        const chunks =
          Array.isArray(stepObject.text) && !stepObject.content ? stepObject.text : wordChunks(block.text);
        for (const text of chunks) {
          push({ type: "content_block_delta", index, delta: { type: "text_delta", text } }, true);
        }
        break;
      }
      case "thinking":
        push({
          type: "content_block_start",
          index,
          content_block: { ...block, thinking: "", signature: "" },
        });
        for (const thinking of wordChunks(block.thinking)) {
          push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } }, true);
        }
        push({
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: block.signature },
        });
        break;
      case "tool_use":
        push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
        for (const partial_json of jsonChunks(JSON.stringify(block.input ?? {}))) {
          push(
            { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } },
            true,
          );
        }
        break;
      default:
        // redacted_thinking and server tool blocks arrive whole.
        push({ type: "content_block_start", index, content_block: block });
    }
    push({ type: "content_block_stop", index });
  });

  push({
    type: "message_delta",
    delta: {
      stop_reason: final.stop_reason,
      stop_sequence: final.stop_sequence,
      stop_details: final.stop_details,
      container: final.container,
    },
    usage: {
      input_tokens: final.usage.input_tokens,
      cache_creation_input_tokens: final.usage.cache_creation_input_tokens,
      cache_read_input_tokens: final.usage.cache_read_input_tokens,
      output_tokens: final.usage.output_tokens,
      output_tokens_details: final.usage.output_tokens_details,
      server_tool_use: final.usage.server_tool_use,
    },
  });
  push({ type: "message_stop" });
  return plan.events;
}
