/**
 * The tokens a Responses API request puts in the model's context: its `instructions`, its tool definitions and
 * every item of the conversation (the `previous_response_id` chain's inputs and outputs, then this `input`).
 */
import {
  contentTokens,
  fieldsOf,
  ITEM_OVERHEAD_TOKENS,
  itemListTokens,
  MEDIA_PART_TOKENS,
  optionalItemTokens,
  sumTokens,
  valueTokens,
} from "../scripted/context-tokens.js";
import type { CacheSegment } from "../scripted/prompt-cache.js";

/** What the model's context holds for one request. */
export interface OpenAIContext {
  /** The request's `instructions` (those of earlier requests of a chain are not carried over). */
  instructions?: unknown;
  /** The request's `tools`. */
  tools?: unknown;
  /** The conversation's items, oldest first: `server.transcript(previousId)` followed by this request's input. */
  items: readonly unknown[];
}

/** A content part: the text the model reads in it; a picture, file or sound at a fixed cost. */
function partTokens(part: unknown): number {
  const fields = fieldsOf(part);
  switch (fields?.type) {
    case "input_text":
    case "output_text":
    case "summary_text":
    case "reasoning_text":
      return valueTokens(fields.text);
    case "refusal":
      return valueTokens(fields.refusal);
    case "input_image":
    case "input_file":
    case "input_audio":
      return MEDIA_PART_TOKENS;
    default:
      return valueTokens(part);
  }
}

/** A message's `content` or a tool output: a text, or a list of parts. */
function partsTokens(content: unknown): number {
  return contentTokens(content, partTokens);
}

/** The text the model reads in one input or output item, without the item's overhead. */
function itemTextTokens(item: unknown): number {
  const fields = fieldsOf(item);
  if (fields === undefined) return valueTokens(item);
  // An easy input message (`{ role, content }`) may leave out its type.
  const type = fields.type ?? ("role" in fields ? "message" : undefined);
  switch (type) {
    case "message":
      return partsTokens(fields.content);
    case "function_call":
      return valueTokens(fields.name) + valueTokens(fields.arguments);
    case "custom_tool_call":
      return valueTokens(fields.name) + valueTokens(fields.input);
    case "function_call_output":
    case "custom_tool_call_output":
      return partsTokens(fields.output);
    case "reasoning":
      // Only what the summary and any plain content say: encrypted reasoning is opaque to the server.
      return partsTokens(fields.summary) + partsTokens(fields.content);
    default:
      return valueTokens(item);
  }
}

/**
 * The context of a Responses API request as prompt-cache segments, in order: the instructions, each tool
 * definition, each item of the conversation. Their tokens add up to `countOpenAIContextTokens`.
 */
export function openAIContextSegments(context: OpenAIContext): CacheSegment[] {
  const segment = (kind: string, value: unknown, tokens: number): CacheSegment => ({
    content: [kind, value],
    tokens: ITEM_OVERHEAD_TOKENS + tokens,
  });
  return [
    ...(context.instructions === undefined || context.instructions === null
      ? []
      : [segment("instructions", context.instructions, valueTokens(context.instructions))]),
    ...(Array.isArray(context.tools) ? context.tools : []).map((tool) =>
      segment("tool", tool, valueTokens(tool)),
    ),
    ...context.items.map((item) => segment("item", item, itemTextTokens(item))),
  ];
}

/**
 * The context tokens of a Responses API request: each item's text plus `ITEM_OVERHEAD_TOKENS`, the instructions
 * (with the overhead of one item) and each tool definition as JSON (with the overhead of one item). Text is
 * counted with the o200k tokenizer: message parts' `text` / `refusal`, function calls' `name` + `arguments`,
 * function call outputs' `output`, reasoning summaries; images, files and audio count `MEDIA_PART_TOKENS`; an
 * item or part of another kind counts as its JSON. A pure function: the same context always counts the same, and
 * the count of a list is the sum of the counts of its items.
 */
export function countOpenAIContextTokens(context: OpenAIContext): number {
  return (
    optionalItemTokens(context.instructions, valueTokens) +
    itemListTokens(context.tools, valueTokens) +
    itemListTokens(context.items, itemTextTokens)
  );
}

/** The tokens a reply's output items say (its usage's `output_tokens`): their text, no overhead. */
export function countOpenAIOutputTokens(output: readonly unknown[]): number {
  return sumTokens(output, itemTextTokens);
}
