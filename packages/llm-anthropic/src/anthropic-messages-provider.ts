import Anthropic from "@anthropic-ai/sdk";
import type { Message, MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages";
import {
  CONTINUATION_LOST,
  fail,
  type LlmCallOptions,
  type LlmCallResult,
  type LlmProvider,
  type LlmRequest,
  WireTools,
} from "@aptix/core";
import { keepAliveFetch, LazySdkClient } from "@aptix/llm-transport";
import { EPHEMERAL, withCacheBreakpoints } from "./cache-breakpoints.js";
import { fromAnthropicMessage } from "./from-anthropic-message.js";
import { providerError } from "./provider-error.js";
import { toAnthropicMessages } from "./to-anthropic-messages.js";

export interface AnthropicMessagesProviderOptions {
  /** Defaults to `anthropic`: what `ConversationContext.provider` names. */
  id?: string;
  /** Read from ANTHROPIC_API_KEY when absent. */
  apiKey?: string;
  /** Read from ANTHROPIC_BASE_URL when absent: the origin (`https://api.anthropic.com`), without `/v1`. */
  baseURL?: string;
  /** SDK retries of 408/409/429/5xx and connection errors, with its backoff and `retry-after`. Default 2. */
  maxRetries?: number;
  /** Per-attempt timeout. Default 120 s. */
  timeoutMs?: number;
  /** `max_tokens` of a request that sets no `maxOutputTokens` (the Messages API requires one). Default 4096. */
  maxTokens?: number;
}

const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/** Wire tools of a catalog, the last one with a prompt-cache breakpoint when `cached`. */
function wireToolsOf(cached: boolean): WireTools<Anthropic.Messages.Tool> {
  return new WireTools(
    (tool, index, tools): Anthropic.Messages.Tool => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters as Anthropic.Messages.Tool.InputSchema,
      ...(cached && index === tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
    }),
  );
}

/**
 * An LlmProvider over `client.messages.create` (docs/wire-mapping.md). Anthropic keeps no conversation state, so core
 * replays the session's transcript on every call (`storesResponses` is false). The client is made on the
 * first call, so a service without an API key still starts, and each call without one fails clearly.
 */
export class AnthropicMessagesProvider implements LlmProvider {
  readonly id: string;
  readonly storesResponses = false;
  readonly #options: AnthropicMessagesProviderOptions;
  readonly #client: LazySdkClient<Anthropic>;
  // A catalog's wire tools, converted once: with the prompt-cache breakpoint on the last tool (withCacheBreakpoints
  // says why) for the calls of a session's conversation, without it for a call sent once.
  readonly #wireTools = {
    cached: wireToolsOf(true),
    once: wireToolsOf(false),
  };

  constructor(options: AnthropicMessagesProviderOptions = {}) {
    this.id = options.id ?? "anthropic";
    this.#options = options;
    this.#client = new LazySdkClient({
      provider: this.id,
      vendor: "Anthropic",
      keyVariable: "ANTHROPIC_API_KEY",
      apiKey: () => options.apiKey ?? process.env.ANTHROPIC_API_KEY,
      baseURL: options.baseURL,
      maxRetries: options.maxRetries,
      timeoutMs: options.timeoutMs,
      // A keep-alive agent of its own.
      create: ({ agent, ...sdkOptions }) => new Anthropic({ ...sdkOptions, fetch: keepAliveFetch(agent) }),
    });
  }

  async call(request: LlmRequest, options: LlmCallOptions = {}): Promise<LlmCallResult> {
    if (request.continuation.type === "previous_response") {
      // Nothing to continue from on Anthropic's side: core answers a lost continuation by replaying.
      return fail("PROVIDER_ERROR", "Anthropic keeps no responses to continue from; replay the transcript.", {
        provider: this.id,
        reason: CONTINUATION_LOST,
      });
    }
    const client = this.#client.get();
    if (!(client instanceof Anthropic)) return client;
    const body = this.#body(request);
    try {
      const message = options.onTextDelta
        ? await this.#stream(client, body, options.onTextDelta, options.signal)
        : await client.messages.create(body, options.signal ? { signal: options.signal } : {});
      return fromAnthropicMessage(message, body);
    } catch (error) {
      return providerError(error, body);
    }
  }

  #body(request: LlmRequest): MessageCreateParamsNonStreaming {
    const replayed = request.continuation.type === "replay" ? request.continuation.items : [];
    const { system, messages } = toAnthropicMessages([...replayed, ...request.input]);
    const body: MessageCreateParamsNonStreaming = {
      model: request.model,
      max_tokens: request.maxOutputTokens ?? this.#options.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
      messages,
    };
    if (system !== undefined) body.system = system;
    const cached = request.cacheKey !== undefined;
    if (request.tools.length > 0) {
      body.tools = this.#wireTools[cached ? "cached" : "once"].of(request.tools);
    }
    // The API accepts `tool_choice` only along with `tools`; a forced tool is sent even without them, so the
    // API names the mistake instead of the call quietly running without the tool.
    if (request.toolChoice.type === "tool") {
      body.tool_choice = { type: "tool", name: request.toolChoice.name };
    } else if (request.tools.length > 0) {
      body.tool_choice = { type: "auto" };
    }
    // Only a call whose prompt the session's next calls send again is worth writing to the cache.
    return cached ? withCacheBreakpoints(body) : body;
  }

  async #stream(
    client: Anthropic,
    body: MessageCreateParamsNonStreaming,
    onTextDelta: (delta: string) => void,
    signal: AbortSignal | undefined,
  ): Promise<Message> {
    const stream = client.messages.stream(body, signal ? { signal } : {});
    stream.on("text", (delta) => onTextDelta(delta));
    return await stream.finalMessage();
  }
}
