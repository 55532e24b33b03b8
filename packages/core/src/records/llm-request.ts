import type { ToolDefinition } from "./tool-definition.js";
import type { TranscriptItem } from "./transcript-item.js";

/** How the model picks tools on one call. `tool` forces the named tool. */
type ToolChoice = { type: "auto" } | { type: "tool"; name: string };

/** Where the provider picks up the conversation before this call's `input`. */
export type LlmContinuation =
  /** The session's first call: nothing comes before `input`. */
  | { type: "none" }
  /** Continue from a response the provider stored (OpenAI `previous_response_id`). */
  | { type: "previous_response"; responseId: string }
  /** The provider keeps no state (or lost it): these items come first, in order. */
  | { type: "replay"; items: TranscriptItem[] };

/** One provider-neutral LLM call, written by the Composition layer and sent by the LLM Call layer. */
export interface LlmRequest {
  model: string;
  continuation: LlmContinuation;
  /** The items this call adds to the conversation, in order. */
  input: TranscriptItem[];
  /** Every call carries the full tool list: the Responses API does not carry tools over `previous_response_id`. */
  tools: ToolDefinition[];
  toolChoice: ToolChoice;
  maxOutputTokens?: number;
  /**
   * Set on the calls of a session's conversation, whose prompt the session's next calls send again: the same for
   * every such call of a session, different between sessions and principals, and no identifier in clear. A provider
   * that routes by it (OpenAI `prompt_cache_key`) lands a session's calls on the cache holding its prefix; one that
   * caches on request (Anthropic's breakpoints) caches the prompts of the calls that have it. Absent on a call whose
   * prompt is sent once (a compaction's summary).
   */
  cacheKey?: string;
}
