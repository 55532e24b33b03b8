/**
 * A scripted, OpenAI-compatible Responses API server on a random loopback port, for tests.
 * See the package README.md for usage.
 */
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { answerStep } from "../scripted/answer-step.js";
import type { ScriptedExchange } from "../scripted/scripted-exchange.js";
import {
  postsTo,
  type ScriptedLlmServer,
  scriptedIds,
  startScriptedLlmServer,
} from "../scripted/scripted-llm-server.js";
import { writeEventStream } from "../scripted/sse-writer.js";
import { StepQueue } from "../scripted/step-queue.js";
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
import { buildResponse, inputItems, planStream, type RequestBody, type WireResponse } from "./wire.js";

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
}

/** A response the server keeps for `previous_response_id` (requests with `store` !== false). */
interface StoredResponse {
  response: WireResponse;
  /** The request body that produced it. */
  request: RequestBody;
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

const INVALID_JSON_MESSAGE =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)";

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

  /** A reply: the Response object, or its stream events numbered as the real API numbers them. */
  async function reply(exchange: Exchange, body: RequestBody, stepObject: ReplyStep): Promise<void> {
    const { record } = exchange;
    const response = buildResponse(stepObject, body, id, defaultModel, Math.floor(Date.now() / 1000));
    if (body.store !== false) store.set(response.id, { response: structuredClone(response), request: body });
    if (!record.stream) {
      sendJson(exchange, 200, response, "reply");
      record.answer = { status: 200, kind: "reply", responseId: response.id, body: response };
      return;
    }
    record.answer = { status: 200, kind: "reply", responseId: response.id };
    const events = planStream(stepObject, response).map((planned, sequence_number) => ({
      event: { ...planned.event, sequence_number } as ResponseStreamEvent,
      delayMs: planned.delayMs,
    }));
    await writeEventStream(
      exchange,
      { "x-request-id": `req_${prefix}${record.index}` },
      events,
      stepObject.dropAfterEvents,
    );
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
      reply: (stepObject) => reply(exchange, body, stepObject),
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

  const server = await startScriptedLlmServer({
    host: options.host,
    port: options.port,
    queue,
    basePath: "/v1",
    handle,
    internalErrorBody: (message) => ({
      error: { message, type: "harness_error", param: null, code: "harness_internal_error" },
    }),
    onReset: () => store.clear(),
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
      const chain: StoredResponse[] = [];
      let cursor: string | undefined = responseId;
      while (cursor !== undefined) {
        const stored = store.get(cursor);
        if (!stored)
          throw new Error(
            `testing-llm-servers: response ${cursor} is not stored (forgotten, or store: false)`,
          );
        chain.unshift(stored);
        const prev = stored.request.previous_response_id;
        cursor = typeof prev === "string" ? prev : undefined;
      }
      return chain.flatMap((s) => [
        ...inputItems(s.request),
        ...(s.response.output as unknown as Record<string, unknown>[]),
      ]);
    },
  };
  return api;
}
