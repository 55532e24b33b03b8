import {
  type LlmCallOptions,
  type LlmCallResult,
  type LlmProvider,
  type LlmRequest,
  WireTools,
  wireParameters,
} from "@aptix/core";
import type { LazySdkClient } from "@aptix/llm-transport";
import OpenAI, { type APIPromise } from "openai";
import type { Stream } from "openai/core/streaming";
import type {
  FunctionTool,
  Response,
  ResponseCreateParamsBase,
  ResponseCreateParamsNonStreaming,
  ResponseStreamEvent,
} from "openai/resources/responses/responses";
import { fromResponsesOutput } from "./from-responses-output.js";
import { lazyOpenAIClient, type OpenAIClientOptions } from "./openai-client.js";
import { providerError, type ReceivedAnswer, StreamErrorEvent } from "./provider-error.js";
import { toResponsesInput } from "./to-responses-input.js";

export interface OpenAIResponsesProviderOptions extends OpenAIClientOptions {
  /** Defaults to `openai`: what `ConversationContext.provider` names. */
  id?: string;
  /**
   * Let OpenAI store responses so calls continue with `previous_response_id` (default). With false, every
   * call replays the session's transcript and reasoning travels encrypted.
   */
  store?: boolean;
}

/**
 * An LlmProvider over `client.responses.create` (docs/wire-mapping.md). The client is made on the first call, so a
 * service without an API key still starts, and each call without one fails clearly.
 */
export class OpenAIResponsesProvider implements LlmProvider {
  readonly id: string;
  readonly storesResponses: boolean;
  readonly #client: LazySdkClient<OpenAI>;
  readonly #wireTools = new WireTools(
    // Strict whenever the schema allows it; `strict` is always sent, as the API's default is strict.
    (tool): FunctionTool => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      ...wireParameters(tool),
    }),
  );

  constructor(options: OpenAIResponsesProviderOptions = {}) {
    this.id = options.id ?? "openai";
    this.storesResponses = options.store ?? true;
    this.#client = lazyOpenAIClient(this.id, options);
  }

  async call(request: LlmRequest, options: LlmCallOptions = {}): Promise<LlmCallResult> {
    const client = this.#client.get();
    if (!(client instanceof OpenAI)) return client;
    const body = this.#body(request);
    const requestOptions = options.signal ? { signal: options.signal } : {};
    let received: ReceivedAnswer | undefined;
    // Not `.withResponse()`: it rejects without the response when the body cannot be parsed.
    const answer = async <T>(pending: APIPromise<T>): Promise<T> => {
      const http = await pending.asResponse();
      received = { status: http.status, requestId: http.headers.get("x-request-id") };
      return await pending;
    };
    try {
      const response = options.onTextDelta
        ? await this.#stream(
            await answer(client.responses.create({ ...body, stream: true }, requestOptions)),
            options.onTextDelta,
          )
        : await answer(client.responses.create(body as ResponseCreateParamsNonStreaming, requestOptions));
      return fromResponsesOutput(response, body, received);
    } catch (error) {
      return providerError(error, received, body);
    }
  }

  /**
   * `DELETE /v1/responses/{id}` of a deleted session's stored response: a 404 is as good (gone already, or
   * expired); anything else is a reason to try again, which names no id.
   */
  async deleteStoredResponse(
    responseId: string,
  ): Promise<{ deleted: true } | { deleted: false; reason: string }> {
    const client = this.#client.get();
    if (!(client instanceof OpenAI)) return { deleted: false, reason: client.errors[0].message };
    try {
      await client.responses.delete(responseId);
      return { deleted: true };
    } catch (error) {
      if (error instanceof OpenAI.NotFoundError) return { deleted: true };
      if (error instanceof OpenAI.APIError) {
        return {
          deleted: false,
          reason: `HTTP ${error.status ?? "error"}${error.code ? ` ${error.code}` : ""}`,
        };
      }
      return { deleted: false, reason: error instanceof Error ? error.message : String(error) };
    }
  }

  #body(request: LlmRequest): ResponseCreateParamsBase {
    const continuation = request.continuation;
    const replayed =
      continuation.type === "replay" ? toResponsesInput(continuation.items, { replay: true }) : [];
    const body: ResponseCreateParamsBase = {
      model: request.model,
      input: [...replayed, ...toResponsesInput(request.input, { replay: false })],
      // Tools go with every call: they do not carry over previous_response_id.
      tools: this.#wireTools.of(request.tools),
      tool_choice:
        request.toolChoice.type === "tool" ? { type: "function", name: request.toolChoice.name } : "auto",
      store: this.storesResponses,
    };
    if (continuation.type === "previous_response") body.previous_response_id = continuation.responseId;
    if (request.maxOutputTokens !== undefined) body.max_output_tokens = request.maxOutputTokens;
    // One key per session: OpenAI routes calls with one key and prefix to one cache (docs/wire-mapping.md).
    if (request.cacheKey !== undefined) body.prompt_cache_key = request.cacheKey;
    if (!this.storesResponses) body.include = ["reasoning.encrypted_content"];
    return body;
  }

  async #stream(
    stream: Stream<ResponseStreamEvent>,
    onTextDelta: (delta: string) => void,
  ): Promise<Response> {
    for await (const event of stream) {
      if (event.type === "response.output_text.delta") onTextDelta(event.delta);
      else if (
        event.type === "response.completed" ||
        event.type === "response.incomplete" ||
        event.type === "response.failed"
      ) {
        return event.response;
      } else if (event.type === "error") {
        throw new StreamErrorEvent(event.code, event.message);
      }
    }
    throw new Error("the stream ended before the response completed");
  }
}
