/**
 * A scripted, OpenAI-compatible Responses API server on a random loopback port, for tests.
 * See the package README.md for usage.
 */
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { answerStep } from "../scripted/answer-step.js";
import { checkedContextWindow } from "../scripted/context-tokens.js";
import { PromptCache } from "../scripted/prompt-cache.js";
import type { ScriptedExchange } from "../scripted/scripted-exchange.js";
import {
  postsTo,
  type ScriptedLlmServer,
  scriptedIds,
  startScriptedLlmServer,
} from "../scripted/scripted-llm-server.js";
import { type PlannedSseEvent, writeEventStream } from "../scripted/sse-writer.js";
import { StepQueue } from "../scripted/step-queue.js";
import { openAICachedTokens } from "./cached-tokens.js";
import { countOpenAIContextTokens, openAIContextSegments } from "./context-tokens.js";
import { hashedEmbedding, parseEmbeddingsRequest } from "./embeddings.js";
import { preloadOpenAISchemas, type SchemaViolation, validateCreateResponse } from "./openapi.js";
import {
  errorBody,
  type RecordedAnswer,
  type RecordedRequest,
  type ReplyStep,
  type ScriptStep,
  type StepObject,
} from "./script.js";
import {
  buildResponse,
  inputItems,
  type PlannedEvent,
  planRefusedStream,
  planStream,
  type RequestBody,
  type WireResponse,
} from "./wire.js";

export interface ScriptedOpenAIOptions {
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Port. Default 0 (a random free port). */
  port?: number;
  /**
   * What to do with a `POST /v1/responses` body that does not match the OpenAPI document's `CreateResponse`:
   * `reject` (default) answers 400 as the real API would; `record` only records `schemaErrors` and goes on;
   * `off` skips validation (and the schema compile at start).
   */
  validation?: "reject" | "record" | "off";
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (else 401 `invalid_api_key`). */
  apiKey?: string;
  /** Model reported when the request names none. Default `gpt-test`. */
  defaultModel?: string;
  /** Steps to start with (same as calling `script(...)`). */
  script?: ScriptStep[];
  /**
   * The model's context window: a request whose context tokens (`countOpenAIContextTokens` over the whole
   * `previous_response_id` chain, its instructions, input and tools) exceed it is refused as the real API refuses
   * it (`context_length_exceeded`). Default: no window. `setContextWindow` changes it.
   */
  contextWindowTokens?: number;
  /** The shortest prefix the prompt cache keeps, as on the real API. Default 1024. */
  minCacheableTokens?: number;
}

const DEFAULT_MIN_CACHEABLE_TOKENS = 1024;

/** A response the server keeps for `previous_response_id` (requests with `store` !== false). */
interface StoredResponse {
  response: WireResponse;
  /** The request body that produced it. */
  request: RequestBody;
  /**
   * The context tokens of the conversation's items through this response: every input and output item of the
   * chain, without any request's instructions or tools (a later request adds its own).
   */
  chainTokens: number;
}

/**
 * `baseUrl` is `http://127.0.0.1:PORT/v1`, what the SDK expects. Requests are recorded live: answers and
 * stream events are filled in as they happen. `reset()` also clears the stored responses.
 */
export interface ScriptedOpenAI extends ScriptedLlmServer<ScriptStep, RecordedRequest, ScriptedOpenAI> {
  /** The recorded `POST /v1/responses` requests. */
  responseRequests(): RecordedRequest[];
  /** The recorded `POST /v1/embeddings` requests (answered by `hashedEmbedding`, never from the script). */
  embeddingRequests(): RecordedRequest[];
  /** The stored response, if the server still has it. */
  storedResponse(responseId: string): StoredResponse | undefined;
  /** Ids of the stored responses, oldest first. */
  storedResponseIds(): string[];
  /** Forgets a stored response (simulates expiry): later `previous_response_id` to it → 400 `previous_response_not_found`. */
  forget(responseId: string): boolean;
  /**
   * The conversation as the model saw it when producing `responseId`: every input item and output item along
   * the `previous_response_id` chain, oldest first. Throws if a response of the chain is not stored.
   */
  transcript(responseId: string): Record<string, unknown>[];
  /**
   * Sets the context window for the requests that come next (`undefined`: none). Throws unless it is a positive
   * whole number of tokens.
   */
  setContextWindow(tokens: number | undefined): void;
}

interface ApiError {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

type Exchange = ScriptedExchange<RecordedRequest>;

function validationCode(v: SchemaViolation | undefined): string {
  switch (v?.keyword) {
    case "unknownParameter":
      return "unknown_parameter";
    case "required":
      return "missing_required_parameter";
    case "type":
      return "invalid_type";
    default:
      return "invalid_value";
  }
}

/** The real API's refusal of an input past the model's context window (a 400, or an `error` event in a stream). */
const CONTEXT_LENGTH_EXCEEDED: ApiError = {
  message: "Your input exceeds the context window of this model. Please adjust your input and try again.",
  type: "invalid_request_error",
  param: "input",
  code: "context_length_exceeded",
};

const INVALID_JSON_MESSAGE =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)";

/** A request's counted context: what the chain's items hold, and what the model holds once the window applies. */
interface CountedContext {
  /** The conversation's items (the chain and this input): what a response to it stores as `chainTokens`. */
  chainTokens: number;
  /** The context tokens the model reads: all of them, or what `truncation: "auto"` keeps. */
  modelTokens: number;
  /** The conversation's items, oldest first: the chain's, then this input. */
  conversation(): Record<string, unknown>[];
}

function notStored(responseId: string): Error {
  return new Error(`testing-llm-servers: response ${responseId} is not stored (forgotten, or store: false)`);
}

/** Starts a scripted Responses API server; resolves once it listens. */
export async function startScriptedOpenAI(options: ScriptedOpenAIOptions = {}): Promise<ScriptedOpenAI> {
  const validation = options.validation ?? "reject";
  if (validation !== "off") preloadOpenAISchemas();
  const defaultModel = options.defaultModel ?? "gpt-test";
  const queue = new StepQueue<StepObject, RecordedRequest>({
    initial: options.script,
    textReply: (text) => ({ kind: "reply", text }),
  });
  const store = new Map<string, StoredResponse>();
  const { prefix, next: id } = scriptedIds(6);
  let contextWindow = checkedContextWindow(options.contextWindowTokens);
  const promptCache = new PromptCache();
  const minCacheableTokens = options.minCacheableTokens ?? DEFAULT_MIN_CACHEABLE_TOKENS;

  function sendJson(
    exchange: Exchange,
    status: number,
    body: unknown,
    kind: RecordedAnswer["kind"],
    headers: Record<string, string> = {},
  ): void {
    exchange.sendJson(status, body, kind, {
      "x-request-id": `req_${prefix}${exchange.record.index}`,
      "openai-processing-ms": "1",
      ...headers,
    });
  }

  function sendError(
    exchange: Exchange,
    status: number,
    error: ApiError,
    headers: Record<string, string> = {},
  ): void {
    sendJson(exchange, status, { error }, "harness", headers);
  }

  /** Writes planned stream events numbered as the real API numbers them. */
  function writeStream(exchange: Exchange, plan: PlannedEvent[], dropAfterEvents?: number): Promise<void> {
    const events: PlannedSseEvent<ResponseStreamEvent>[] = plan.map((planned, sequence_number) => ({
      event: { ...planned.event, sequence_number } as ResponseStreamEvent,
      delayMs: planned.delayMs,
    }));
    return writeEventStream(
      exchange,
      { "x-request-id": `req_${prefix}${exchange.record.index}` },
      events,
      dropAfterEvents,
    );
  }

  /** A reply: the Response object, or its stream events. */
  async function reply(
    exchange: Exchange,
    body: RequestBody,
    stepObject: ReplyStep,
    context: CountedContext,
  ): Promise<void> {
    const { record } = exchange;
    const response = buildResponse(stepObject, body, {
      id,
      defaultModel,
      now: Math.floor(Date.now() / 1000),
      contextTokens: context.modelTokens,
      // The model runs: the prompt cache is read and written, whatever usage the step scripts.
      cachedTokens: Math.min(
        context.modelTokens,
        openAICachedTokens({
          cache: promptCache,
          scope: JSON.stringify([body.model ?? defaultModel, body.prompt_cache_key ?? null]),
          segments: openAIContextSegments({
            instructions: body.instructions,
            tools: body.tools,
            items: context.conversation(),
          }),
          minCacheableTokens,
        }),
      ),
    });
    if (body.store !== false) {
      const chainTokens = context.chainTokens + countOpenAIContextTokens({ items: response.output });
      store.set(response.id, { response: structuredClone(response), request: body, chainTokens });
    }
    if (!record.stream) {
      sendJson(exchange, 200, response, "reply");
      record.answer = { status: 200, kind: "reply", responseId: response.id, body: response };
      return;
    }
    record.answer = { status: 200, kind: "reply", responseId: response.id };
    await writeStream(exchange, planStream(stepObject, response), stepObject.dropAfterEvents);
  }

  /**
   * Counts the request's context (recording it) and applies the window: the tokens the model holds, or
   * `undefined` when the request is past the window and `truncation: "auto"` cannot bring it within.
   */
  function countContext(
    record: RecordedRequest,
    body: RequestBody,
    previous: StoredResponse | undefined,
    items: Record<string, unknown>[],
  ): CountedContext | undefined {
    const chainTokens = (previous?.chainTokens ?? 0) + countOpenAIContextTokens({ items });
    const contextTokens =
      chainTokens +
      countOpenAIContextTokens({ instructions: body.instructions, tools: body.tools, items: [] });
    record.contextTokens = contextTokens;
    record.contextWindowTokens = contextWindow;
    record.contextOverflow = false;
    const conversation = () => [...(previous ? chainItems(previous) : []), ...items];
    if (contextWindow === undefined || contextTokens <= contextWindow) {
      return { chainTokens, modelTokens: contextTokens, conversation };
    }
    if (body.truncation === "auto") {
      // The real API drops items from the beginning of the conversation until the rest fits.
      let modelTokens = contextTokens;
      for (const item of conversation()) {
        if (modelTokens <= contextWindow) break;
        modelTokens -= countOpenAIContextTokens({ items: [item] });
      }
      if (modelTokens <= contextWindow) return { chainTokens, modelTokens, conversation };
    }
    record.contextOverflow = true;
    return undefined;
  }

  /** Refuses a request past the context window as the real API does: a 400, or a stream that fails at once. */
  async function refuseOverflow(exchange: Exchange, body: RequestBody): Promise<void> {
    if (!exchange.record.stream) return sendError(exchange, 400, CONTEXT_LENGTH_EXCEEDED);
    exchange.record.answer = { status: 200, kind: "harness" };
    const started = buildResponse({ kind: "reply" }, body, {
      id,
      defaultModel,
      now: Math.floor(Date.now() / 1000),
      contextTokens: 0,
      cachedTokens: 0,
    });
    await writeStream(exchange, planRefusedStream(started, { ...CONTEXT_LENGTH_EXCEEDED }));
  }

  async function handleCreate(exchange: Exchange): Promise<void> {
    const { record } = exchange;
    const body = exchange.parseJsonBody();
    if (body === undefined) {
      return sendError(exchange, 400, {
        message: INVALID_JSON_MESSAGE,
        type: "invalid_request_error",
        param: null,
        code: null,
      });
    }

    if (validation !== "off") {
      const result = validateCreateResponse(record.body);
      if (!result.valid) {
        record.schemaErrors = result.violations;
        if (validation === "reject") {
          const first = result.violations[0];
          return sendError(exchange, 400, {
            message: `Invalid request body: ${result.message}`,
            type: "invalid_request_error",
            param: first?.param || null,
            code: validationCode(first),
          });
        }
      }
    }

    const previousId = body.previous_response_id;
    let previous: StoredResponse | undefined;
    if (typeof previousId === "string") {
      previous = store.get(previousId);
      if (!previous) {
        return sendError(exchange, 400, {
          message: `Previous response with id '${previousId}' not found.`,
          type: "invalid_request_error",
          param: "previous_response_id",
          code: "previous_response_not_found",
        });
      }
    }

    // Every function call the model made (in the previous response, or replayed in `input`) needs its output.
    const items = inputItems(body);
    const calls = [
      ...(previous?.response.output ?? []).filter((o) => o.type === "function_call").map((o) => o.call_id),
      ...items.filter((i) => i.type === "function_call").map((i) => String(i.call_id)),
    ];
    const outputs = new Set(
      items.filter((i) => i.type === "function_call_output").map((i) => String(i.call_id)),
    );
    const missing = calls.find((callId) => !outputs.has(callId));
    if (missing !== undefined) {
      return sendError(exchange, 400, {
        message: `No tool output found for function call ${missing}.`,
        type: "invalid_request_error",
        param: "input",
        code: null,
      });
    }

    const context = countContext(record, body, previous, items);
    if (context === undefined) return refuseOverflow(exchange, body);

    const taken = await queue.take(record);
    if ("failure" in taken) {
      return sendError(
        exchange,
        500,
        {
          message: taken.message,
          type: "harness_error",
          param: null,
          code: taken.failure === "exhausted" ? "script_exhausted" : "script_step_failed",
        },
        { "x-should-retry": "false" },
      );
    }
    await answerStep(exchange, taken.step, {
      error: (stepObject, headers) =>
        sendJson(exchange, stepObject.status, errorBody(stepObject), "error", headers),
      reply: (stepObject) => reply(exchange, body, stepObject, context),
    });
  }

  /** Embeddings are answered at once, deterministically (`hashedEmbedding`), never from the script. */
  function handleEmbeddings(exchange: Exchange): void {
    const body = exchange.parseJsonBody();
    const parsed =
      body === undefined ? { param: "", message: INVALID_JSON_MESSAGE } : parseEmbeddingsRequest(body);
    if ("param" in parsed) {
      sendError(exchange, 400, {
        message: parsed.message,
        type: "invalid_request_error",
        param: parsed.param || null,
        code: null,
      });
      return;
    }
    const tokens = parsed.inputs.reduce((sum, text) => sum + text.split(/\s+/).filter(Boolean).length, 0);
    sendJson(
      exchange,
      200,
      {
        object: "list",
        data: parsed.inputs.map((text, index) => ({
          object: "embedding",
          index,
          embedding: hashedEmbedding(text, parsed.dimensions),
        })),
        model: parsed.model,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      },
      "harness",
    );
  }

  async function handle(exchange: Exchange): Promise<void> {
    const { req, record } = exchange;
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendError(exchange, 401, {
        message: "Incorrect API key provided.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_api_key",
      });
    }
    const path = new URL(record.path, "http://localhost").pathname.replace(/\/+$/, "");
    if (path === "/v1/responses" && record.method === "POST") {
      return handleCreate(exchange);
    }
    if (path === "/v1/embeddings" && record.method === "POST") {
      return handleEmbeddings(exchange);
    }
    const match = /^\/v1\/responses\/([^/]+)$/.exec(path);
    if (match && (record.method === "GET" || record.method === "DELETE")) {
      const responseId = decodeURIComponent(match[1] ?? "");
      const stored = store.get(responseId);
      if (!stored) {
        return sendError(exchange, 404, {
          message: `Response with id '${responseId}' not found.`,
          type: "invalid_request_error",
          param: null,
          code: null,
        });
      }
      if (record.method === "DELETE") {
        store.delete(responseId);
        return sendJson(exchange, 200, { id: responseId, object: "response", deleted: true }, "harness");
      }
      return sendJson(exchange, 200, stored.response, "harness");
    }
    return sendError(exchange, 404, {
      message: `Invalid URL (${record.method} ${record.path})`,
      type: "invalid_request_error",
      param: null,
      code: null,
    });
  }

  /** Every input and output item along the `previous_response_id` chain ending at `last`, oldest first. */
  function chainItems(last: StoredResponse): Record<string, unknown>[] {
    const chain: StoredResponse[] = [last];
    let previousId = last.request.previous_response_id;
    while (typeof previousId === "string") {
      const stored = store.get(previousId);
      if (!stored) throw notStored(previousId);
      chain.unshift(stored);
      previousId = stored.request.previous_response_id;
    }
    return chain.flatMap((s) => [
      ...inputItems(s.request),
      ...(s.response.output as unknown as Record<string, unknown>[]),
    ]);
  }

  const server = await startScriptedLlmServer({
    host: options.host,
    port: options.port,
    queue,
    basePath: "/v1",
    handle,
    internalErrorBody: (message) => ({
      error: { message, type: "harness_error", param: null, code: "harness_internal_error" },
    }),
    onReset: () => {
      store.clear();
      promptCache.clear();
    },
    self: () => api,
  });

  const api: ScriptedOpenAI = {
    ...server,
    responseRequests: () => postsTo(server.requests, /^\/v1\/responses\/?(\?|$)/),
    embeddingRequests: () => postsTo(server.requests, /^\/v1\/embeddings\/?(\?|$)/),
    storedResponse: (responseId) => store.get(responseId),
    storedResponseIds: () => [...store.keys()],
    forget: (responseId) => store.delete(responseId),
    transcript(responseId) {
      const stored = store.get(responseId);
      if (!stored) throw notStored(responseId);
      return chainItems(stored);
    },
    setContextWindow(tokens) {
      contextWindow = checkedContextWindow(tokens);
    },
  };
  return api;
}
