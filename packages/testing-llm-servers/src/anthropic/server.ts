/**
 * A scripted, Anthropic-compatible Messages API server on a random loopback port, for tests.
 * See the package README.md for usage.
 */
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
import { anthropicCacheUsage } from "./cache-usage.js";
import { type AnthropicContextSegment, anthropicContextSegments } from "./context-tokens.js";
import {
  type AnthropicRecordedAnswer,
  type AnthropicRecordedRequest,
  type AnthropicReplyStep,
  type AnthropicScriptStep,
  type AnthropicStepObject,
  type AnthropicStreamEvent,
  errorBody,
} from "./script.js";
import { type AnthropicValidationOptions, validateMessagesRequest } from "./validate.js";
import { type AnthropicRequestBody, buildMessage, type PlannedAnthropicEvent, planStream } from "./wire.js";

export interface ScriptedAnthropicOptions extends AnthropicValidationOptions {
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Port. Default 0 (a random free port). */
  port?: number;
  /**
   * What to do with a `POST /v1/messages` body the real API would reject: `reject` (default) answers 400
   * `invalid_request_error` as the real API would; `record` only records `validationError` and goes on;
   * `off` skips the checks.
   */
  validation?: "reject" | "record" | "off";
  /** When set, requests must carry it as `x-api-key` or `Authorization: Bearer …` (else 401). */
  apiKey?: string;
  /** Model reported when the request names none. Default `claude-test`. */
  defaultModel?: string;
  /** Steps to start with (same as calling `script(...)`). */
  script?: AnthropicScriptStep[];
  /**
   * The model's context window: a request whose context tokens (`countAnthropicContextTokens` over its system
   * prompt, tools and messages) exceed it gets the real API's 400 `prompt is too long: N tokens > M maximum`.
   * Default: no window. `setContextWindow` changes it.
   */
  contextWindowTokens?: number;
  /**
   * The shortest prefix the prompt cache keeps: a breakpoint with fewer tokens before it writes nothing, as on the
   * real API. Default 1024 (Claude Sonnet's and Opus's minimum).
   */
  minCacheableTokens?: number;
}

/**
 * `baseUrl` is `http://127.0.0.1:PORT`, the origin: the SDK adds `/v1/messages`. Requests are recorded live:
 * answers and stream events are filled in as they happen.
 */
export interface ScriptedAnthropic
  extends ScriptedLlmServer<AnthropicScriptStep, AnthropicRecordedRequest, ScriptedAnthropic> {
  /** The recorded `POST /v1/messages` requests. */
  messageRequests(): AnthropicRecordedRequest[];

  /**
   * Sets the context window for the requests that come next (`undefined`: none). Throws unless it is a positive
   * whole number of tokens.
   */
  setContextWindow(tokens: number | undefined): void;
}

type Exchange = ScriptedExchange<AnthropicRecordedRequest>;

const DEFAULT_MIN_CACHEABLE_TOKENS = 1024;

const MESSAGES_PATH = /^\/v1\/messages\/?(\?|$)/;

/**
 * The planned events with `streamError` applied: the events before `afterEvents`, then the in-band `error`
 * event (after the pause planned for the event it replaces), which ends the stream.
 */
function withStreamError(
  plan: PlannedAnthropicEvent[],
  streamError: AnthropicReplyStep["streamError"],
): PlannedSseEvent<AnthropicStreamEvent>[] {
  if (streamError === undefined) return plan;
  const cut = plan.findIndex((_, index) => index >= streamError.afterEvents);
  const replaced = plan[cut];
  if (replaced === undefined) return plan;
  const error: AnthropicStreamEvent = {
    type: "error",
    error: { type: streamError.type ?? "overloaded_error", message: streamError.message ?? "Overloaded" },
  };
  return [...plan.slice(0, cut), { event: error, delayMs: replaced.delayMs, endsStream: true }];
}

/** Starts a scripted Messages API server; resolves once it listens. */
export async function startScriptedAnthropic(
  options: ScriptedAnthropicOptions = {},
): Promise<ScriptedAnthropic> {
  const validation = options.validation ?? "reject";
  const defaultModel = options.defaultModel ?? "claude-test";
  const queue = new StepQueue<AnthropicStepObject, AnthropicRecordedRequest>({
    initial: options.script,
    textReply: (text) => ({ kind: "reply", text }),
  });
  const { prefix, next: id } = scriptedIds(8);
  let contextWindow = checkedContextWindow(options.contextWindowTokens);
  const promptCache = new PromptCache();
  const minCacheableTokens = options.minCacheableTokens ?? DEFAULT_MIN_CACHEABLE_TOKENS;
  const requestId = (record: AnthropicRecordedRequest) =>
    `req_${prefix}${record.index.toString().padStart(6, "0")}`;

  function sendJson(
    exchange: Exchange,
    status: number,
    body: unknown,
    kind: AnthropicRecordedAnswer["kind"],
    headers: Record<string, string> = {},
  ): void {
    exchange.sendJson(status, body, kind, { "request-id": requestId(exchange.record), ...headers });
  }

  /** An answer of the harness itself, in Anthropic's error shape. */
  function sendError(
    exchange: Exchange,
    status: number,
    type: string,
    message: string,
    headers: Record<string, string> = {},
    kind: AnthropicRecordedAnswer["kind"] = "harness",
  ): void {
    const body = { type: "error", error: { type, message }, request_id: requestId(exchange.record) };
    sendJson(exchange, status, body, kind, headers);
  }

  /** A reply: the Message, or its stream events (with `streamError` applied). */
  async function reply(
    exchange: Exchange,
    body: AnthropicRequestBody,
    stepObject: AnthropicReplyStep,
    segments: AnthropicContextSegment[],
    contextTokens: number,
  ): Promise<void> {
    const { record } = exchange;
    // The model runs: the prompt cache is read and written, whatever usage the step scripts.
    const cache = anthropicCacheUsage({
      cache: promptCache,
      scope: typeof body.model === "string" ? body.model : defaultModel,
      segments,
      topLevel: body.cache_control,
      minCacheableTokens,
    });
    const message = buildMessage(stepObject, body, { id, defaultModel, contextTokens, cache });
    if (!record.stream) {
      sendJson(exchange, 200, message, "reply");
      record.answer = { status: 200, kind: "reply", messageId: message.id, body: message };
      return;
    }
    record.answer = { status: 200, kind: "reply", messageId: message.id };
    await writeEventStream(
      exchange,
      { "request-id": requestId(record) },
      withStreamError(planStream(stepObject, message), stepObject.streamError),
      stepObject.dropAfterEvents,
    );
  }

  async function handleCreate(exchange: Exchange): Promise<void> {
    const { req, record } = exchange;
    if (!req.headers["anthropic-version"]) {
      return sendError(exchange, 400, "invalid_request_error", "anthropic-version: header is required");
    }
    const body = exchange.parseJsonBody();
    if (body === undefined) {
      return sendError(
        exchange,
        400,
        "invalid_request_error",
        "There was an issue with your request body: it is not valid JSON.",
      );
    }

    if (validation !== "off") {
      const error = validateMessagesRequest(record.body, options);
      if (error !== undefined) {
        record.validationError = error;
        if (validation === "reject") return sendError(exchange, 400, "invalid_request_error", error);
      }
    }

    // The whole conversation is in every request; past the window the API refuses it before the model runs.
    const segments = anthropicContextSegments(body);
    record.cacheBreakpoints = [
      ...segments.filter((segment) => segment.cacheControl !== undefined).map((segment) => segment.path),
      ...(body.cache_control !== undefined && body.cache_control !== null ? ["cache_control"] : []),
    ];
    const contextTokens = segments.reduce((total, segment) => total + segment.tokens, 0);
    record.contextTokens = contextTokens;
    record.contextWindowTokens = contextWindow;
    record.contextOverflow = contextWindow !== undefined && contextTokens > contextWindow;
    if (record.contextOverflow) {
      return sendError(
        exchange,
        400,
        "invalid_request_error",
        `prompt is too long: ${contextTokens} tokens > ${contextWindow} maximum`,
      );
    }

    const taken = await queue.take(record);
    if ("failure" in taken) {
      return sendError(
        exchange,
        500,
        "harness_error",
        taken.message,
        { "x-should-retry": "false" },
        taken.failure === "exhausted" ? "exhausted" : "harness",
      );
    }
    await answerStep(exchange, taken.step, {
      rawHeaders: { "request-id": requestId(record) },
      error(stepObject, headers) {
        const id = headers["request-id"] ?? requestId(record);
        sendJson(exchange, stepObject.status, errorBody(stepObject, id), "error", headers);
      },
      reply: (stepObject) => reply(exchange, body, stepObject, segments, contextTokens),
    });
  }

  async function handle(exchange: Exchange): Promise<void> {
    const { req, record } = exchange;
    if (options.apiKey !== undefined) {
      const key = req.headers["x-api-key"];
      if (key !== options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        return sendError(exchange, 401, "authentication_error", "invalid x-api-key");
      }
    }
    if (MESSAGES_PATH.test(record.path) && record.method === "POST") {
      return handleCreate(exchange);
    }
    return sendError(exchange, 404, "not_found_error", "Not Found");
  }

  const server = await startScriptedLlmServer({
    host: options.host,
    port: options.port,
    queue,
    basePath: "",
    handle,
    internalErrorBody: (message) => ({ type: "error", error: { type: "harness_error", message } }),
    onReset: () => promptCache.clear(),
    self: () => api,
  });

  const api: ScriptedAnthropic = {
    ...server,
    messageRequests: () => postsTo(server.requests, MESSAGES_PATH),

    setContextWindow(tokens) {
      contextWindow = checkedContextWindow(tokens);
    },
  };
  return api;
}
