import type {
  CacheControlEphemeral,
  ContentBlockParam,
  MessageCreateParamsNonStreaming,
} from "@anthropic-ai/sdk/resources/messages";

/** The API's default five-minute cache: a session's calls come minutes apart at most while it is worked on. */
export const EPHEMERAL: CacheControlEphemeral = { type: "ephemeral" };

/**
 * The body with its prompt-cache breakpoints on the system block and on the last block of the last message
 * (docs/wire-mapping.md); the last tool has its own from the adapter's wire tools: three of the four the API
 * allows. Anthropic caches the prefix up to each breakpoint (tools, then system, then messages), so the next call
 * of the session, which replays the same transcript with a few items more, reads it from the cache and pays full
 * price only for what is new. Thinking blocks take no `cache_control`: the breakpoint goes on the last block of
 * the message that does.
 */
export function withCacheBreakpoints(body: MessageCreateParamsNonStreaming): MessageCreateParamsNonStreaming {
  const marked = { ...body };
  if (typeof body.system === "string") {
    marked.system = [{ type: "text", text: body.system, cache_control: EPHEMERAL }];
  }
  const lastMessage = body.messages.at(-1);
  if (lastMessage && lastMessage.role !== "system" && Array.isArray(lastMessage.content)) {
    const content: ContentBlockParam[] = [...lastMessage.content];
    const at = content.findLastIndex(
      (block) => block.type !== "thinking" && block.type !== "redacted_thinking",
    );
    const block = content[at];
    if (block && block.type !== "thinking" && block.type !== "redacted_thinking") {
      content[at] = { ...block, cache_control: EPHEMERAL };
      marked.messages = [...body.messages.slice(0, -1), { ...lastMessage, content }];
    }
  }
  return marked;
}
