/**
 * The tokens a Messages API request puts in the model's context: its `system` prompt, its tool definitions and all
 * its `messages` (the Messages API is stateless: every request carries the whole conversation).
 */
import {
  contentTokens,
  fieldsOf,
  ITEM_OVERHEAD_TOKENS,
  MEDIA_PART_TOKENS,
  sumTokens,
  valueTokens,
} from "../scripted/context-tokens.js";
import type { CacheSegment } from "../scripted/prompt-cache.js";

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

/** A segment of a Messages API request's context, where it is in the body, and its `cache_control`, if any. */
export interface AnthropicContextSegment extends CacheSegment {
  /** `tools[1]`, `system`, `system[0]`, `messages[3]`, `messages[3].content[1]`. */
  path: string;
  cacheControl?: unknown;
}

/** A tool or block without its `cache_control`, which marks a breakpoint and is not part of what is read. */
function withoutCacheControl(value: unknown): { content: unknown; cacheControl?: unknown } {
  const fields = fieldsOf(value);
  if (fields === undefined || !("cache_control" in fields)) return { content: value };
  const { cache_control: cacheControl, ...content } = fields;
  return cacheControl === null || cacheControl === undefined ? { content } : { content, cacheControl };
}

/**
 * An item (the system prompt, a message) as segments: one per block (a text is one text block; an empty list, one
 * of nothing), the item's overhead counted with its first.
 */
function itemSegments(path: string, role: unknown, content: unknown): AnthropicContextSegment[] {
  if (typeof content === "string") {
    // A text is read as one text block: the same prefix as that block.
    const block = { type: "text", text: content };
    return [{ path, content: [role, true, block], tokens: ITEM_OVERHEAD_TOKENS + blockTokens(block) }];
  }
  if (!Array.isArray(content)) {
    return [{ path, content: [role, content], tokens: ITEM_OVERHEAD_TOKENS + valueTokens(content) }];
  }
  if (content.length === 0) return [{ path, content: [role], tokens: ITEM_OVERHEAD_TOKENS }];
  const blocksPath = role === "system" ? path : `${path}.content`;
  return content.map((block, index) => {
    const { content: read, cacheControl } = withoutCacheControl(block);
    return {
      path: `${blocksPath}[${index}]`,
      // A block that opens an item is not the same segment as that block inside one.
      content: [role, index === 0, read],
      tokens: (index === 0 ? ITEM_OVERHEAD_TOKENS : 0) + blockTokens(read),
      ...(cacheControl !== undefined ? { cacheControl } : {}),
    };
  });
}

/**
 * A Messages API request's context as segments, in the order the API caches them: each tool definition, the
 * system prompt (or each of its blocks), each message (or each of its blocks). Their tokens add up to
 * `countAnthropicContextTokens`.
 */
export function anthropicContextSegments(body: {
  system?: unknown;
  tools?: unknown;
  messages?: unknown;
}): AnthropicContextSegment[] {
  const segments: AnthropicContextSegment[] = [];
  if (Array.isArray(body.tools)) {
    body.tools.forEach((tool, index) => {
      const { content, cacheControl } = withoutCacheControl(tool);
      segments.push({
        path: `tools[${index}]`,
        content,
        tokens: ITEM_OVERHEAD_TOKENS + valueTokens(content),
        ...(cacheControl !== undefined ? { cacheControl } : {}),
      });
    });
  }
  if (body.system !== undefined && body.system !== null) {
    segments.push(...itemSegments("system", "system", body.system));
  }
  if (Array.isArray(body.messages)) {
    body.messages.forEach((message, index) => {
      const fields = fieldsOf(message);
      segments.push(...itemSegments(`messages[${index}]`, fields?.role, fields?.content));
    });
  }
  return segments;
}

/**
 * The context tokens of a Messages API request body: the system prompt (with the overhead of one item), each tool
 * definition as JSON and each message, each with `ITEM_OVERHEAD_TOKENS`. Text is counted with the o200k
 * tokenizer: `text` and `thinking` blocks, `tool_use` names + inputs (as JSON), `tool_result` contents, text
 * documents; images and binary documents count `MEDIA_PART_TOKENS`; a block of another kind counts as its JSON.
 * `cache_control` markers count nothing. A pure function of the body: the same body always counts the same.
 */
export function countAnthropicContextTokens(body: {
  system?: unknown;
  tools?: unknown;
  messages?: unknown;
}): number {
  return anthropicContextSegments(body).reduce((total, segment) => total + segment.tokens, 0);
}

/** The tokens a reply's content blocks say (its usage's `output_tokens`, at least 1 as the API reports). */
export function countAnthropicOutputTokens(content: readonly unknown[]): number {
  return Math.max(1, sumTokens(content, blockTokens));
}
