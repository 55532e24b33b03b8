/**
 * The tokens a Messages API request puts in the model's context: its `system` prompt, its tool definitions and all
 * its `messages` (the Messages API is stateless: every request carries the whole conversation).
 */
import {
  contentTokens,
  fieldsOf,
  itemListTokens,
  MEDIA_PART_TOKENS,
  optionalItemTokens,
  sumTokens,
  valueTokens,
} from "../scripted/context-tokens.js";

/** A content block: the text the model reads in it; a picture or a binary document at a fixed cost. */
function blockTokens(block: unknown): number {
  const fields = fieldsOf(block);
  switch (fields?.type) {
    case "text":
      return valueTokens(fields.text);
    case "thinking":
      return valueTokens(fields.thinking);
    case "tool_use":
    case "server_tool_use":
      return valueTokens(fields.name) + valueTokens(fields.input ?? {});
    case "tool_result":
      return blocksTokens(fields.content);
    case "image":
      return MEDIA_PART_TOKENS;
    case "document": {
      const source = fieldsOf(fields.source);
      if (source?.type === "text") return valueTokens(source.data);
      if (source?.type === "content") return blocksTokens(source.content);
      return MEDIA_PART_TOKENS;
    }
    default:
      return valueTokens(block);
  }
}

/** A message's (or a tool result's, or the system prompt's) content: a text, or a list of blocks. */
function blocksTokens(content: unknown): number {
  return contentTokens(content, blockTokens);
}

/**
 * The context tokens of a Messages API request body: the system prompt (with the overhead of one item), each tool
 * definition as JSON and each message, each with `ITEM_OVERHEAD_TOKENS`. Text is counted with the o200k
 * tokenizer: `text` and `thinking` blocks, `tool_use` names + inputs (as JSON), `tool_result` contents, text
 * documents; images and binary documents count `MEDIA_PART_TOKENS`; a block of another kind counts as its JSON.
 * A pure function of the body: the same body always counts the same.
 */
export function countAnthropicContextTokens(body: {
  system?: unknown;
  tools?: unknown;
  messages?: unknown;
}): number {
  return (
    optionalItemTokens(body.system, blocksTokens) +
    itemListTokens(body.tools, valueTokens) +
    itemListTokens(body.messages, (message) => blocksTokens(fieldsOf(message)?.content))
  );
}

/** The tokens a reply's content blocks say (its usage's `output_tokens`, at least 1 as the API reports). */
export function countAnthropicOutputTokens(content: readonly unknown[]): number {
  return Math.max(1, sumTokens(content, blockTokens));
}
