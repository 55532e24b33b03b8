/** Builds Responses API wire objects (a `Response`, its stream events) from a scripted reply. */
import type {
  Response,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseStreamEvent,
  ResponseUsage,
} from "openai/resources/responses/responses";
import type { PlannedSseEvent } from "../scripted/sse-writer.js";
import { joinedText, jsonChunks, StreamPlan, wordChunks } from "../scripted/stream-plan.js";
import { countOpenAIOutputTokens } from "./context-tokens.js";
import type { ReplyStep, UsageSpec } from "./script.js";

/** A Response as the API sends it (`output_text` is added by the SDK, not sent). */
export type WireResponse = Omit<Response, "output_text"> & { store?: boolean };

/** A request body as far as the harness reads it. */
export type RequestBody = Record<string, unknown>;

type IdFactory = (prefix: "resp" | "msg" | "fc" | "call" | "rs") => string;

/** A stream event (sequence number not yet assigned). */
type UnnumberedEvent = DistributiveOmit<ResponseStreamEvent, "sequence_number">;

/** A stream event (sequence number not yet assigned) and the pause before writing it. */
export type PlannedEvent = PlannedSseEvent<UnnumberedEvent>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** `input` as a list of items (`"text"` becomes one user message). */
export function inputItems(body: RequestBody): Record<string, unknown>[] {
  const input = body.input;
  if (typeof input === "string") return [{ role: "user", content: input }];
  if (Array.isArray(input))
    return input.filter((i): i is Record<string, unknown> => i !== null && typeof i === "object");
  return [];
}

/**
 * The scripted usage, its missing counts filled in with the request's context tokens, the cache's share of them and
 * the output's tokens.
 */
function usageFor(
  spec: UsageSpec | undefined,
  context: ResponseContext,
  output: ResponseOutputItem[],
): ResponseUsage {
  const input_tokens = spec?.input_tokens ?? context.contextTokens;
  const output_tokens = spec?.output_tokens ?? countOpenAIOutputTokens(output);
  return {
    input_tokens,
    input_tokens_details: {
      cached_tokens: spec?.input_tokens_details?.cached_tokens ?? context.cachedTokens,
      cache_write_tokens: spec?.input_tokens_details?.cache_write_tokens ?? 0,
    },
    output_tokens,
    output_tokens_details: { reasoning_tokens: spec?.output_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: spec?.total_tokens ?? input_tokens + output_tokens,
  };
}

/** The output items of a reply: reasoning, then the message, then function calls (the real API's order). */
function buildOutput(step: ReplyStep, id: IdFactory): ResponseOutputItem[] {
  if (step.output) return structuredClone(step.output);
  const itemStatus = step.status === "incomplete" ? "incomplete" : "completed";
  const output: ResponseOutputItem[] = [];
  for (const r of step.reasoning ?? []) {
    const item: ResponseReasoningItem = {
      id: r.id ?? id("rs"),
      type: "reasoning",
      summary: (r.summary ?? []).map((text) => ({ type: "summary_text", text })),
    };
    if (r.encryptedContent !== undefined) item.encrypted_content = r.encryptedContent;
    output.push(item);
  }
  const text = joinedText(step.text);
  if (text !== undefined) {
    const message: ResponseOutputMessage = {
      id: id("msg"),
      type: "message",
      status: itemStatus,
      role: "assistant",
      content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
    };
    output.push(message);
  }
  for (const call of step.functionCalls ?? []) {
    const fc: ResponseFunctionToolCall = {
      id: call.id ?? id("fc"),
      type: "function_call",
      status: call.status ?? itemStatus,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
      call_id: call.callId ?? id("call"),
      name: call.name,
    };
    output.push(fc);
  }
  return output;
}

/** How a Response is made: ids, the model named when the request names none, the time, the context's tokens. */
export interface ResponseContext {
  id: IdFactory;
  defaultModel: string;
  /** Seconds since the epoch. */
  now: number;
  /** The request's context tokens: the usage's `input_tokens` unless the step scripts it. */
  contextTokens: number;
  /** What of them the prompt cache held: the usage's `cached_tokens` unless the step scripts it. */
  cachedTokens: number;
}

/** The Response object for a reply to `body` (request parameters are echoed as the real API does). */
export function buildResponse(step: ReplyStep, body: RequestBody, context: ResponseContext): WireResponse {
  const { id, defaultModel, now } = context;
  const output = buildOutput(step, id);
  const status = step.status ?? "completed";
  const reasoning = (body.reasoning ?? {}) as { effort?: unknown; summary?: unknown };
  const response = {
    id: step.id ?? id("resp"),
    object: "response",
    created_at: now,
    status,
    background: false,
    completed_at: status === "completed" ? now : null,
    error:
      status === "failed"
        ? (step.error ?? { code: "server_error", message: "The model failed to generate a response." })
        : null,
    incomplete_details:
      status === "incomplete" ? (step.incompleteDetails ?? { reason: "max_output_tokens" }) : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    model: step.model ?? (typeof body.model === "string" ? body.model : defaultModel),
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    safety_identifier: body.safety_identifier ?? null,
    service_tier: "default",
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: "text" }, verbosity: "medium" },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_logprobs: body.top_logprobs ?? 0,
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? "disabled",
    usage: usageFor(step.usage, context, output),
    metadata: body.metadata ?? {},
    ...step.overrides,
  };
  return response as unknown as WireResponse;
}

function textChunks(step: ReplyStep, text: string): string[] {
  return Array.isArray(step.text) ? step.text : wordChunks(text);
}

/** The response as `response.created` / `response.in_progress` carry it: nothing produced yet, no usage. */
function inProgressSnapshot(final: WireResponse): Response {
  const snapshot = {
    ...final,
    status: "in_progress",
    completed_at: null,
    error: null,
    incomplete_details: null,
    output: [],
  } as WireResponse;
  delete snapshot.usage;
  return snapshot as Response;
}

/**
 * The stream the real API answers a `stream: true` request it refuses once the response has started (an input
 * past the context window): HTTP 200, `response.created`, `response.in_progress`, then an `error` event carrying
 * the error object a 400 would. On the wire that object is nested under `error`, unlike the SDK's
 * `ResponseErrorEvent` type; the SDK throws an `APIError` (no status) with its `code` and `message`.
 */
export function planRefusedStream(started: WireResponse, error: Record<string, unknown>): PlannedEvent[] {
  const snapshot = inProgressSnapshot(started);
  const refusal = { type: "error", error } as unknown as UnnumberedEvent;
  return [
    { event: { type: "response.created", response: snapshot }, delayMs: 0 },
    { event: { type: "response.in_progress", response: structuredClone(snapshot) }, delayMs: 0 },
    { event: refusal, delayMs: 0 },
  ];
}

/** The `text/event-stream` events for a reply, in the order the real API sends them. */
export function planStream(step: ReplyStep, final: WireResponse): PlannedEvent[] {
  const plan = new StreamPlan<UnnumberedEvent>(step.chunkDelayMs);
  const push = (event: UnnumberedEvent, isDelta = false) => plan.push(event, isDelta);
  const snapshot = inProgressSnapshot(final);
  push({ type: "response.created", response: snapshot });
  push({ type: "response.in_progress", response: structuredClone(snapshot) });

  final.output.forEach((item, output_index) => {
    if (item.type === "message") {
      push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, status: "in_progress", content: [] },
      });
      item.content.forEach((part, content_index) => {
        if (part.type === "output_text") {
          push({
            type: "response.content_part.added",
            item_id: item.id,
            output_index,
            content_index,
            part: { type: "output_text", text: "", annotations: [], logprobs: [] },
          });
          for (const delta of textChunks(step, part.text)) {
            push(
              {
                type: "response.output_text.delta",
                item_id: item.id,
                output_index,
                content_index,
                delta,
                logprobs: [],
              },
              true,
            );
          }
          push({
            type: "response.output_text.done",
            item_id: item.id,
            output_index,
            content_index,
            text: part.text,
            logprobs: [],
          });
        } else {
          push({
            type: "response.content_part.added",
            item_id: item.id,
            output_index,
            content_index,
            part: { type: "refusal", refusal: "" },
          });
          push(
            {
              type: "response.refusal.delta",
              item_id: item.id,
              output_index,
              content_index,
              delta: part.refusal,
            },
            true,
          );
          push({
            type: "response.refusal.done",
            item_id: item.id,
            output_index,
            content_index,
            refusal: part.refusal,
          });
        }
        push({ type: "response.content_part.done", item_id: item.id, output_index, content_index, part });
      });
    } else if (item.type === "function_call") {
      const itemId = item.id ?? "";
      push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      for (const delta of jsonChunks(item.arguments)) {
        push({ type: "response.function_call_arguments.delta", item_id: itemId, output_index, delta }, true);
      }
      push({
        type: "response.function_call_arguments.done",
        item_id: itemId,
        output_index,
        name: item.name,
        arguments: item.arguments,
      });
    } else if (item.type === "reasoning") {
      push({ type: "response.output_item.added", output_index, item: { ...item, summary: [] } });
      item.summary.forEach((part, summary_index) => {
        push({
          type: "response.reasoning_summary_part.added",
          item_id: item.id,
          output_index,
          summary_index,
          part: { type: "summary_text", text: "" },
        });
        push(
          {
            type: "response.reasoning_summary_text.delta",
            item_id: item.id,
            output_index,
            summary_index,
            delta: part.text,
          },
          true,
        );
        push({
          type: "response.reasoning_summary_text.done",
          item_id: item.id,
          output_index,
          summary_index,
          text: part.text,
        });
        push({
          type: "response.reasoning_summary_part.done",
          item_id: item.id,
          output_index,
          summary_index,
          part,
        });
      });
    } else {
      push({ type: "response.output_item.added", output_index, item });
    }
    push({ type: "response.output_item.done", output_index, item });
  });

  const terminal =
    final.status === "incomplete"
      ? "response.incomplete"
      : final.status === "failed"
        ? "response.failed"
        : "response.completed";
  push({ type: terminal, response: final as Response });
  return plan.events;
}
