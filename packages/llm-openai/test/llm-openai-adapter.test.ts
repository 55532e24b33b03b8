import {
  AgentCatalog,
  AgentService,
  CONTINUATION_LOST,
  type LlmRequest,
  type ToolDefinition,
} from "@aptix/core";
import { InMemoryFileStore, inMemorySessionStores } from "@aptix/core/testing";
import { OpenAIResponsesProvider } from "@aptix/llm-openai";
import { type ScriptedOpenAI, type StepObject, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

let server: ScriptedOpenAI;

const readFile: ToolDefinition = {
  name: "read_file",
  description: "Read a file.",
  parameters: { type: "object", properties: { path: { type: "string" } } },
};

/** The service's catalog: one conversation context on this adapter, whose mode offers `read_file`. */
function catalog(): AgentCatalog {
  const created = AgentCatalog.create({
    conversationContexts: [
      {
        id: "openai",
        bootPrompt: "You are Aptix.",
        model: "gpt-test",
        provider: "openai",
        defaultMode: "general",
      },
    ],
    modes: [
      {
        id: "general",
        displayName: "General",
        tools: ["read_file"],
        toolChoice: null,
        instructions: "Help.",
      },
    ],
    clientTools: [readFile],
  });
  if (!created.successful) throw new Error(created.errors[0].message);
  return created.result;
}

function provider(options: { maxRetries?: number; timeoutMs?: number; store?: boolean } = {}) {
  return new OpenAIResponsesProvider({ apiKey: "test", baseURL: server.baseUrl, maxRetries: 0, ...options });
}

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: "gpt-test",
    continuation: { type: "none" },
    input: [
      { type: "system_message", text: "You are Aptix." },
      {
        type: "user_message",
        content: [
          { type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nHi" },
          { type: "image", mimeType: "image/png", dataBase64: "iVBORw0KGgo=" },
          { type: "file", fileName: "spec.pdf", mimeType: "application/pdf", dataBase64: "JVBERi0=" },
        ],
      },
    ],
    tools: [readFile],
    toolChoice: { type: "auto" },
    ...overrides,
  };
}

/** A 200 `text/event-stream` answer of exactly these events, each under its type as the SSE event name. */
function eventStream(
  events: Array<{ type: string } & Record<string, unknown>>,
  headers: Record<string, string> = {},
): StepObject {
  return step.raw(
    events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(""),
    {
      contentType: "text/event-stream",
      headers,
    },
  );
}

/** How OpenAI words a lost continuation. */
const notFound = (responseId: string) => ({
  code: "previous_response_not_found",
  message: `Previous response with id '${responseId}' not found.`,
});

beforeAll(async () => {
  server = await startScriptedOpenAI();
});

afterEach(() => {
  // Whatever the adapter sent validated against the official CreateResponse schema.
  for (const received of server.responseRequests()) expect(received.schemaErrors).toBeUndefined();
  expect(server.pendingSteps()).toBe(0);
  server.reset();
});

afterAll(async () => {
  await server.close();
});

describe("OpenAIResponsesProvider over HTTP", () => {
  it("writes the real wire format of a first call and reads text and usage", async () => {
    server.script(
      step.reply({
        text: "Hello.",
        usage: {
          input_tokens: 30,
          output_tokens: 7,
          input_tokens_details: { cached_tokens: 4 },
          output_tokens_details: { reasoning_tokens: 2 },
        },
      }),
    );
    const result = await provider().call(request({ maxOutputTokens: 500, cacheKey: "session-key" }));

    expect(result.successful && result.result.text).toBe("Hello.");
    expect(result.successful && result.result.usage).toEqual({
      inputTokens: 30,
      outputTokens: 7,
      cachedInputTokens: 4,
      reasoningTokens: 2,
    });
    expect(result.successful && result.result.finishReason).toBe("stop");
    expect(result.successful && result.result.responseId).toMatch(/^resp_/);
    expect(server.responseRequests()[0]?.body).toEqual({
      model: "gpt-test",
      input: [
        { role: "system", content: [{ type: "input_text", text: "You are Aptix." }] },
        {
          role: "user",
          content: [
            { type: "input_text", text: "[MODE: general]\n\n[INSTRUCTION]\nHi" },
            { type: "input_image", detail: "auto", image_url: "data:image/png;base64,iVBORw0KGgo=" },
            { type: "input_file", filename: "spec.pdf", file_data: "data:application/pdf;base64,JVBERi0=" },
          ],
        },
      ],
      tools: [
        {
          type: "function",
          name: "read_file",
          description: "Read a file.",
          // Its schema has a strict form, so it is sent in it: the optional path required and nullable.
          parameters: {
            type: "object",
            properties: { path: { type: ["string", "null"] } },
            required: ["path"],
            additionalProperties: false,
          },
          strict: true,
        },
      ],
      tool_choice: "auto",
      store: true,
      max_output_tokens: 500,
      prompt_cache_key: "session-key",
    });
  });

  it("sends no prompt_cache_key for a request without a cache key", async () => {
    server.script(step.reply({ text: "Hello." }));
    await provider().call(request());
    expect(server.responseRequests()[0]?.body).not.toHaveProperty("prompt_cache_key");
  });

  it("converts a catalog once: calls offering the same tools array trace the same wire tools", async () => {
    server.script(step.reply({ text: "One." }), step.reply({ text: "Two." }), step.reply({ text: "Three." }));
    const adapter = provider();
    const tools = [readFile];
    const wireTools = async (offered: ToolDefinition[]) => {
      const result = await adapter.call(request({ tools: offered }));
      if (!result.successful) throw new Error(result.errors[0].message);
      return (result.result.trace.providerRequest as { tools: unknown[] }).tools;
    };
    const first = await wireTools(tools);
    expect(await wireTools(tools)).toBe(first);
    // Another array, even with the same tools, is converted anew.
    const other = await wireTools([readFile]);
    expect(other).not.toBe(first);
    expect(other).toStrictEqual(first);
    expect(
      server.responseRequests().map((received) => (received.body as { tools: unknown }).tools),
    ).toStrictEqual([first, first, first]);
  });

  it("reads function calls and sends their outputs back with previous_response_id and a forced tool", async () => {
    server.script(
      step.functionCalls([{ name: "read_file", arguments: { path: "a.ts" }, callId: "call_a" }]),
      step.text("Read it."),
    );
    const first = await provider().call(request({ toolChoice: { type: "tool", name: "read_file" } }));
    if (!first.successful) throw new Error(first.errors[0].message);
    expect(first.result.toolCalls).toEqual([
      { callId: "call_a", name: "read_file", argumentsJson: '{"path":"a.ts"}' },
    ]);
    expect(first.result.finishReason).toBe("tool_calls");
    expect(server.responseRequests()[0]?.body).toMatchObject({
      tool_choice: { type: "function", name: "read_file" },
    });

    const second = await provider().call(
      request({
        continuation: { type: "previous_response", responseId: first.result.responseId ?? "" },
        input: [{ type: "function_call_output", callId: "call_a", output: "missing", isError: true }],
      }),
    );
    expect(second.successful && second.result.text).toBe("Read it.");
    expect(server.responseRequests()[1]?.body).toMatchObject({
      previous_response_id: first.result.responseId,
      input: [{ type: "function_call_output", call_id: "call_a", output: '{"error":"missing"}' }],
      tools: [{ type: "function", name: "read_file" }],
    });
  });

  it("replays a transcript without previous_response_id when it does not store responses", async () => {
    server.script(step.text("Replayed."));
    const result = await provider({ store: false }).call(
      request({
        continuation: {
          type: "replay",
          items: [
            { type: "system_message", text: "You are Aptix." },
            { type: "user_message", content: [{ type: "text", text: "first" }] },
            { type: "reasoning", provider: "openai", data: { id: "rs_1", type: "reasoning", summary: [] } },
            { type: "function_call", callId: "c1", name: "read_file", argumentsJson: "{}" },
            { type: "function_call_output", callId: "c1", output: '"x"', isError: false },
            { type: "assistant_message", text: "ok" },
          ],
        },
        input: [{ type: "user_message", content: [{ type: "text", text: "second" }] }],
      }),
    );
    expect(result.successful).toBe(true);
    const body = server.responseRequests()[0]?.body as Record<string, unknown>;
    expect(body.store).toBe(false);
    expect(body.previous_response_id).toBeUndefined();
    expect(body.include).toEqual(["reasoning.encrypted_content"]);
    // A reasoning item without its encrypted content cannot be replayed, so it is left out.
    expect(
      (body.input as Array<{ type?: string; role?: string }>).map((item) => item.type ?? item.role),
    ).toEqual(["system", "user", "function_call", "function_call_output", "assistant", "user"]);
  });

  it("marks previous_response_not_found as a lost continuation", async () => {
    const result = await provider().call(
      request({ continuation: { type: "previous_response", responseId: "resp_gone" }, input: [] }),
    );
    expect(result.successful).toBe(false);
    expect(!result.successful && result.errors[0]).toMatchObject({
      code: "PROVIDER_ERROR",
      details: {
        provider: "openai",
        status: 400,
        code: "previous_response_not_found",
        reason: CONTINUATION_LOST,
      },
    });
  });

  it("retries a 429 as the SDK is configured to, then succeeds", async () => {
    server.script(step.rateLimited(0), step.text("After the wait."));
    const result = await provider({ maxRetries: 2 }).call(request());
    expect(result.successful && result.result.text).toBe("After the wait.");
    expect(server.responseRequests()).toHaveLength(2);
  });

  it("turns a 500 into PROVIDER_ERROR with status and code, its request id in the trace only", async () => {
    server.script(
      step.error(500, {
        message: "boom",
        type: "server_error",
        code: "internal",
        headers: { "x-request-id": "req_123" },
      }),
    );
    const result = await provider().call(request());
    expect(!result.successful && result.errors[0]).toMatchObject({
      code: "PROVIDER_ERROR",
      details: { provider: "openai", status: 500, code: "internal", type: "server_error" },
    });
    expect(!result.successful && result.errors[0]?.details).not.toHaveProperty("requestId");
    expect(!result.successful && result.trace?.providerResponse).toMatchObject({
      status: 500,
      requestId: "req_123",
    });
  });

  it("turns a timeout, a malformed body and a dropped connection into PROVIDER_ERROR", async () => {
    server.script(step.text("too late", { delayMs: 1_500 }));
    const late = await provider({ timeoutMs: 300 }).call(request());
    expect(!late.successful && late.errors[0]?.details).toMatchObject({ reason: "timeout" });

    server.script(step.raw());
    const malformed = await provider().call(request());
    expect(!malformed.successful && malformed.errors[0]?.code).toBe("PROVIDER_ERROR");

    server.script(step.raw(JSON.stringify({ hello: "not a response" }), { contentType: "application/json" }));
    const notResponse = await provider().call(request());
    expect(!notResponse.successful && notResponse.errors[0]?.message).toContain("not a Response");

    server.script(step.drop());
    const dropped = await provider().call(request());
    expect(!dropped.successful && dropped.errors[0]?.details).toMatchObject({ reason: "connection" });
  });

  it("keeps the status of a 200 whose body is not a usable Response, and its request id in the trace", async () => {
    const headers = { "x-request-id": "req_unreadable" };
    server.script(step.raw(undefined, { headers }));
    const malformed = await provider().call(request());
    expect(!malformed.successful && malformed.errors[0]?.details).toEqual({
      provider: "openai",
      reason: "malformed",
      status: 200,
    });
    expect(!malformed.successful && malformed.trace?.providerResponse).toMatchObject({
      requestId: "req_unreadable",
    });

    server.script(step.raw(JSON.stringify({ hello: "not a response" }), { headers }));
    const notResponse = await provider().call(request());
    expect(!notResponse.successful && notResponse.errors[0]?.details).toEqual({
      provider: "openai",
      reason: "malformed",
      status: 200,
    });
    expect(!notResponse.successful && notResponse.trace?.providerResponse).toMatchObject({
      requestId: "req_unreadable",
    });
  });

  it("reports a stream's error event with its code, message and status, the request id in the trace", async () => {
    const events = [
      { type: "response.output_text.delta", delta: "Hel", sequence_number: 0 },
      { type: "error", code: "server_error", message: "The model crashed.", param: null, sequence_number: 1 },
    ];
    server.script(eventStream(events, { "x-request-id": "req_stream" }));
    const deltas: string[] = [];
    const result = await provider().call(request(), { onTextDelta: (delta) => deltas.push(delta) });
    expect(deltas).toEqual(["Hel"]);
    expect(!result.successful && result.errors[0]).toMatchObject({
      code: "PROVIDER_ERROR",
      message: expect.stringContaining("The model crashed."),
      details: {
        provider: "openai",
        reason: "stream_error",
        code: "server_error",
        message: "The model crashed.",
        status: 200,
      },
    });
    expect(!result.successful && result.trace?.providerResponse).toMatchObject({ requestId: "req_stream" });
  });

  it("marks previous_response_not_found in a stream's error event or its response.failed as a lost continuation", async () => {
    server.script(
      eventStream([{ type: "error", ...notFound("resp_gone"), param: null, sequence_number: 0 }]),
      step.reply({ output: [], status: "failed", error: notFound("resp_gone") }),
    );
    for (const variant of ["error event", "response.failed"]) {
      const result = await provider().call(request(), { onTextDelta: () => {} });
      expect({ variant, error: !result.successful && result.errors[0] }).toMatchObject({
        variant,
        error: {
          code: "PROVIDER_ERROR",
          details: {
            provider: "openai",
            status: 200,
            code: "previous_response_not_found",
            reason: CONTINUATION_LOST,
          },
        },
      });
    }
  });

  it("keeps the request and response ids of a streamed response that failed in the trace, not the details", async () => {
    server.script(step.reply({ text: ["never"], status: "failed" }));
    const result = await provider().call(request(), { onTextDelta: () => {} });
    expect(!result.successful && result.errors[0]?.details).toEqual({
      provider: "openai",
      code: "server_error",
      status: 200,
    });
    expect(!result.successful && result.trace?.providerResponse).toMatchObject({
      requestId: expect.stringMatching(/^req_/),
      body: { id: expect.stringMatching(/^resp_/), status: "failed" },
    });
  });

  it("maps an incomplete response to a length finish", async () => {
    server.script(
      step.reply({ text: "cut", status: "incomplete", incompleteDetails: { reason: "max_output_tokens" } }),
    );
    const result = await provider().call(request());
    expect(result.successful && result.result.finishReason).toBe("length");
  });

  it("streams text deltas as they arrive and returns the completed response", async () => {
    server.script(step.text(["Hel", "lo ", "world"], { chunkDelayMs: 20 }));
    const deltas: string[] = [];
    const result = await provider().call(request(), { onTextDelta: (delta) => deltas.push(delta) });
    expect(deltas).toEqual(["Hel", "lo ", "world"]);
    expect(result.successful && result.result.text).toBe("Hello world");
    expect(server.responseRequests()[0]?.body).toMatchObject({ stream: true });
  });

  it("keeps its connection open for the next call, after a plain answer and after a stream", async () => {
    server.script(step.text("One."), step.text(["Two."]), step.text("Three."));
    const openai = provider();
    const texts: unknown[] = [];
    for (const streamed of [false, true, false]) {
      const result = await openai.call(request(), streamed ? { onTextDelta: () => {} } : {});
      texts.push(result.successful && result.result.text);
      // A turn of the event loop, as the service's own work between two calls gives: the agent takes a connection
      // back once the answer is read, and a call made in the same turn would open another.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(texts).toEqual(["One.", "Two.", "Three."]);
    const [first, ...later] = server.responseRequests().map((received) => received.connection);
    expect(later).toEqual([first, first]);
  });

  it("fails every call clearly when no API key is configured", async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const result = await new OpenAIResponsesProvider({ baseURL: server.baseUrl }).call(request());
      expect(!result.successful && result.errors[0]).toMatchObject({
        code: "PROVIDER_ERROR",
        details: { reason: "not_configured" },
      });
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });
});

describe("a lost continuation reported inside a stream", () => {
  it.each([
    [
      "an error event",
      (responseId: string) =>
        eventStream([{ type: "error", ...notFound(responseId), param: null, sequence_number: 0 }]),
    ],
    [
      "response.failed",
      (responseId: string) => step.reply({ output: [], status: "failed", error: notFound(responseId) }),
    ],
  ])("as %s replays the transcript, as the HTTP 400 does, and the turn succeeds", async (_, lost) => {
    const agent = new AgentService({
      catalog: catalog(),
      providers: [new OpenAIResponsesProvider({ apiKey: "test", baseURL: server.baseUrl, maxRetries: 0 })],
      store: inMemorySessionStores(),
      files: new InMemoryFileStore(),
    });
    const deltas: string[] = [];
    const turn = (turnId: string, instruction: string) =>
      agent.execute(
        {
          sessionId: "s",
          turnId,
          instruction,
          conversationContextId: "openai",
          stream: true,
        },
        "alice",
        { onEvent: (event) => event.event === "output_text.delta" && deltas.push(event.data.delta) },
      );
    server.script(step.text(["Hello."]));
    expect((await turn("t1", "Hi")).successful).toBe(true);
    const [first] = server.responseRequests();
    const kept = first?.answer?.responseId;
    expect(kept).toMatch(/^resp_/);

    server.enqueue(lost(kept ?? ""), step.text(["Replayed."]));
    const replayed = await turn("t2", "Again");
    expect(replayed).toMatchObject({
      successful: true,
      result: { kind: "final", primaryOutputText: "Replayed." },
    });
    expect(deltas).toEqual(["Hello.", "Replayed."]);
    const [, continued, replay] = server
      .responseRequests()
      .map((received) => received.body as Record<string, unknown>);
    expect(continued).toMatchObject({ previous_response_id: kept, stream: true });
    // The replay sends the whole transcript (t1's exchange, then t2's message) without previous_response_id.
    expect(replay?.previous_response_id).toBeUndefined();
    const replayedInput = (replay?.input ?? []) as Array<{ role?: string; type?: string }>;
    expect(replayedInput.map((item) => item.role ?? item.type)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
    ]);
  });
});
