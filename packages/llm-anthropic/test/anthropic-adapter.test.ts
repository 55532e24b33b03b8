import {
  AgentCatalog,
  AgentService,
  CONTINUATION_LOST,
  type LlmRequest,
  type ToolDefinition,
} from "@aptix/core";
import { InMemoryFileStore, inMemorySessionStores } from "@aptix/core/testing";
import { AnthropicMessagesProvider, type AnthropicMessagesProviderOptions } from "@aptix/llm-anthropic";
import {
  type ScriptedAnthropic,
  startScriptedAnthropic,
  anthropicStep as step,
} from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

// The adapter over real HTTP, through the official SDK, against the scripted Messages API.
let server: ScriptedAnthropic;

const readFile: ToolDefinition = {
  name: "read_file",
  description: "Read a file.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

const BOOT_PROMPT = "You are Aptix, under test.";
const GENERAL_INSTRUCTIONS = "Help with anything in the workspace.";
const REVIEW_INSTRUCTIONS = "Review the code you are shown and submit a review.";

/** The service's catalog: one conversation context on this adapter, modes `general` and `review`. */
function catalog(): AgentCatalog {
  const created = AgentCatalog.create({
    conversationContexts: [
      {
        id: "anthropic",
        bootPrompt: BOOT_PROMPT,
        model: "claude-test",
        provider: "anthropic",
        defaultMode: "general",
      },
    ],
    modes: [
      {
        id: "general",
        displayName: "General",
        tools: ["read_file"],
        toolChoice: null,
        instructions: GENERAL_INSTRUCTIONS,
      },
      {
        id: "review",
        displayName: "Code Review",
        tools: ["read_file"],
        toolChoice: null,
        instructions: REVIEW_INSTRUCTIONS,
        welcomeMessage: "Switched to code review: show me what to look at.",
      },
    ],
    clientTools: [readFile],
  });
  if (!created.successful) throw new Error(created.errors[0].message);
  return created.result;
}

function provider(options: AnthropicMessagesProviderOptions = {}) {
  return new AnthropicMessagesProvider({
    apiKey: "test",
    baseURL: server.baseUrl,
    maxRetries: 0,
    ...options,
  });
}

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: "claude-test",
    continuation: { type: "none" },
    input: [
      { type: "system_message", text: "You are Aptix." },
      { type: "user_message", content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nHi" }] },
    ],
    tools: [readFile],
    toolChoice: { type: "auto" },
    cacheKey: "session-key",
    ...overrides,
  };
}

function body(index = 0): Record<string, unknown> {
  return server.messageRequests()[index]?.body as Record<string, unknown>;
}

beforeAll(async () => {
  server = await startScriptedAnthropic();
});

afterEach(() => {
  // Whatever the adapter sent passed every check of the real API the harness knows.
  for (const received of server.messageRequests()) expect(received.validationError).toBeUndefined();
  expect(server.pendingSteps()).toBe(0);
  server.reset();
});

afterAll(async () => {
  await server.close();
});

describe("AnthropicMessagesProvider over HTTP", () => {
  it("writes the system prompt at top level, the tools with input_schema, and reads text and usage", async () => {
    server.script(step.text("Hello.", { usage: { input_tokens: 30, output_tokens: 7 } }));
    const result = await provider().call(request({ maxOutputTokens: 500 }));

    if (!result.successful) throw new Error(result.errors[0].message);
    expect(result.result).toMatchObject({
      text: "Hello.",
      output: [{ type: "assistant_message", text: "Hello." }],
      toolCalls: [],
      finishReason: "stop",
      usage: { inputTokens: 30, outputTokens: 7 },
    });
    // No server-side state: nothing to continue from, the message id is in the trace only.
    expect(result.result.responseId).toBeUndefined();
    expect(result.result.trace.providerResponse).toMatchObject({ id: expect.stringMatching(/^msg_/) });
    expect(result.result.trace.providerRequest).toEqual(body());

    const [received] = server.messageRequests();
    expect(received?.path).toBe("/v1/messages");
    expect(received?.headers["anthropic-version"]).toBeTruthy();
    expect(received?.body).toEqual({
      model: "claude-test",
      max_tokens: 500,
      // Prompt-cache breakpoints on the system block, the last tool and the last message's last block.
      system: [{ type: "text", text: "You are Aptix.", cache_control: { type: "ephemeral" } }],
      messages: [
        {
          role: "user",
          content: [
            {
              type: "text",
              text: "[MODE: general]\n\n[INSTRUCTION]\nHi",
              cache_control: { type: "ephemeral" },
            },
          ],
        },
      ],
      tools: [
        {
          name: "read_file",
          description: "Read a file.",
          input_schema: readFile.parameters,
          cache_control: { type: "ephemeral" },
        },
      ],
      tool_choice: { type: "auto" },
    });
  });

  it("marks no prompt-cache breakpoint on a request without a cache key: its prompt is sent once", async () => {
    server.script(step.text("Summary."));
    const { cacheKey: _cacheKey, ...once } = request();
    const result = await provider().call(once);
    expect(result.successful).toBe(true);
    expect(server.messageRequests()[0]?.rawBody).not.toContain("cache_control");
    expect(body()).toMatchObject({ system: "You are Aptix." });
  });

  it("uses the configured max_tokens when the request sets none, and sends no tools when there are none", async () => {
    server.script(step.text("ok"), step.text("ok"));
    await provider().call(request({ tools: [] }));
    await provider({ maxTokens: 1234 }).call(request({ tools: [] }));
    expect(body(0)).toMatchObject({ max_tokens: 4096 });
    expect(body(1)).toMatchObject({ max_tokens: 1234 });
    expect(body(0)).not.toHaveProperty("tools");
    expect(body(0)).not.toHaveProperty("tool_choice");
  });

  it("converts a catalog once: calls offering the same tools array trace the same wire tools", async () => {
    server.script(step.text("One."), step.text("Two."), step.text("Three."));
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
    expect([0, 1, 2].map((index) => body(index).tools)).toStrictEqual([first, first, first]);
  });

  it("forces a tool with tool_choice { type: tool, name } and reads tool_use blocks as function calls", async () => {
    server.script(
      step.toolUse([{ name: "read_file", input: { path: "a.ts" }, id: "toolu_a" }], { text: "Let me look." }),
    );
    const result = await provider().call(request({ toolChoice: { type: "tool", name: "read_file" } }));
    if (!result.successful) throw new Error(result.errors[0].message);
    expect(body()).toMatchObject({ tool_choice: { type: "tool", name: "read_file" } });
    expect(result.result.toolCalls).toEqual([
      { callId: "toolu_a", name: "read_file", argumentsJson: '{"path":"a.ts"}' },
    ]);
    expect(result.result.output).toEqual([
      { type: "assistant_message", text: "Let me look." },
      { type: "function_call", callId: "toolu_a", name: "read_file", argumentsJson: '{"path":"a.ts"}' },
    ]);
    expect(result.result.finishReason).toBe("tool_calls");
  });

  it("replays a transcript: tool_use, then tool_result blocks (is_error for an error) first in the next user message", async () => {
    server.script(step.text("Replayed."));
    const result = await provider().call(
      request({
        continuation: {
          type: "replay",
          items: [
            { type: "system_message", text: "You are Aptix." },
            { type: "system_message", text: "[MODE: general] instructions" },
            { type: "user_message", content: [{ type: "text", text: "Read a.ts and b.ts" }] },
            { type: "reasoning", provider: "openai", data: { id: "rs_1", type: "reasoning", summary: [] } },
            {
              type: "reasoning",
              provider: "anthropic",
              data: { type: "thinking", thinking: "Two files.", signature: "sig_1" },
            },
            { type: "assistant_message", text: "Reading both." },
            { type: "function_call", callId: "toolu_a", name: "read_file", argumentsJson: '{"path":"a.ts"}' },
            { type: "function_call", callId: "toolu_b", name: "read_file", argumentsJson: '{"path":"b.ts"}' },
            { type: "function_call_output", callId: "toolu_a", output: '"export {}"', isError: false },
            { type: "function_call_output", callId: "toolu_b", output: "no such file", isError: true },
            { type: "assistant_message", text: "a.ts is empty; b.ts is missing." },
          ],
        },
        input: [
          { type: "user_message", content: [{ type: "text", text: "Thanks." }] },
          { type: "user_message", content: [{ type: "text", text: "Now c.ts?" }] },
        ],
      }),
    );
    expect(result.successful).toBe(true);
    expect(body()).toMatchObject({
      system: [{ type: "text", text: "You are Aptix.\n\n[MODE: general] instructions" }],
      messages: [
        { role: "user", content: [{ type: "text", text: "Read a.ts and b.ts" }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Two files.", signature: "sig_1" },
            { type: "text", text: "Reading both." },
            { type: "tool_use", id: "toolu_a", name: "read_file", input: { path: "a.ts" } },
            { type: "tool_use", id: "toolu_b", name: "read_file", input: { path: "b.ts" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_a", content: '"export {}"', is_error: false },
            { type: "tool_result", tool_use_id: "toolu_b", content: "no such file", is_error: true },
          ],
        },
        { role: "assistant", content: [{ type: "text", text: "a.ts is empty; b.ts is missing." }] },
        // Two consecutive user messages become one.
        {
          role: "user",
          content: [
            { type: "text", text: "Thanks." },
            { type: "text", text: "Now c.ts?", cache_control: { type: "ephemeral" } },
          ],
        },
      ],
    });
    expect((body().messages as unknown[]).length).toBe(5);
  });

  it("puts tool results before the text of the user message they share", async () => {
    server.script(step.text("Done."));
    const result = await provider().call(
      request({
        continuation: {
          type: "replay",
          items: [
            { type: "user_message", content: [{ type: "text", text: "Read a.ts" }] },
            { type: "function_call", callId: "toolu_a", name: "read_file", argumentsJson: '{"path":"a.ts"}' },
          ],
        },
        // A user message that comes before the output in the transcript still lets the result go first.
        input: [
          { type: "user_message", content: [{ type: "text", text: "(the file is big)" }] },
          { type: "function_call_output", callId: "toolu_a", output: "timeout", isError: true },
        ],
      }),
    );
    expect(result.successful).toBe(true);
    expect((body().messages as Array<{ content: unknown }>)[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_a", content: "timeout", is_error: true },
        { type: "text", text: "(the file is big)", cache_control: { type: "ephemeral" } },
      ],
    });
  });

  it("sends images as image blocks and PDFs as document blocks, other files as text", async () => {
    server.script(step.text("Seen."));
    const result = await provider().call(
      request({
        input: [
          {
            type: "user_message",
            content: [
              { type: "text", text: "Look" },
              { type: "image", mimeType: "image/png", dataBase64: "iVBORw0KGgo=" },
              { type: "file", fileName: "spec.pdf", mimeType: "application/pdf", dataBase64: "JVBERi0=" },
              {
                type: "file",
                fileName: "a.cs",
                mimeType: "text/x-csharp",
                dataBase64: Buffer.from("class A {}").toString("base64"),
              },
            ],
          },
        ],
      }),
    );
    expect(result.successful).toBe(true);
    expect(body().messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          {
            type: "document",
            source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" },
            title: "spec.pdf",
          },
          {
            type: "text",
            text: "File a.cs (text/x-csharp):\n\nclass A {}",
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ]);
  });

  it("reads thinking blocks as Anthropic reasoning items, kept verbatim", async () => {
    server.script(
      step.reply({
        thinking: [{ thinking: "Hmm.", signature: "sig_x" }, { redactedData: "EuYB" }],
        text: "Hi",
      }),
    );
    const result = await provider().call(request());
    expect(result.successful && result.result.output).toEqual([
      {
        type: "reasoning",
        provider: "anthropic",
        data: { type: "thinking", thinking: "Hmm.", signature: "sig_x" },
      },
      { type: "reasoning", provider: "anthropic", data: { type: "redacted_thinking", data: "EuYB" } },
      { type: "assistant_message", text: "Hi" },
    ]);
  });

  it("streams text deltas in order, the first before the server has sent the last, and returns the final message", async () => {
    server.script(
      step.text(["Hel", "lo ", "world"], { chunkDelayMs: 80, usage: { input_tokens: 12, output_tokens: 3 } }),
    );
    const deltas: string[] = [];
    let writtenAtFirstDelta = -1;
    const result = await provider().call(request(), {
      onTextDelta: (delta) => {
        if (deltas.length === 0) writtenAtFirstDelta = server.messageRequests()[0]?.events.length ?? -1;
        deltas.push(delta);
      },
    });
    expect(deltas).toEqual(["Hel", "lo ", "world"]);
    if (!result.successful) throw new Error(result.errors[0].message);
    expect(result.result).toMatchObject({
      text: "Hello world",
      finishReason: "stop",
      usage: { inputTokens: 12, outputTokens: 3 },
    });
    const received = server.messageRequests()[0];
    expect(received?.body).toMatchObject({ stream: true });
    const events = received?.events ?? [];
    const lastDelta = events.findLastIndex((event) => event.type === "content_block_delta");
    expect(writtenAtFirstDelta).toBeGreaterThan(0);
    expect(writtenAtFirstDelta).toBeLessThanOrEqual(lastDelta);
    expect(events.map((event) => event.type)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
  });

  it("streams a tool call: input_json_delta pieces come back as one function call", async () => {
    server.script(
      step.toolUse({
        name: "read_file",
        input: { path: "src/some/rather/long/path/to/a/file.ts" },
        id: "toolu_s",
      }),
    );
    const deltas: string[] = [];
    const result = await provider().call(request(), { onTextDelta: (delta) => deltas.push(delta) });
    expect(deltas).toEqual([]);
    expect(result.successful && result.result.toolCalls).toEqual([
      {
        callId: "toolu_s",
        name: "read_file",
        argumentsJson: '{"path":"src/some/rather/long/path/to/a/file.ts"}',
      },
    ]);
    expect(result.successful && result.result.finishReason).toBe("tool_calls");
  });

  it("keeps its connection open for the next call, after a plain answer and after a stream", async () => {
    server.script(step.text("One."), step.text(["Two."]), step.text("Three."));
    const anthropic = provider();
    const texts: unknown[] = [];
    for (const streamed of [false, true, false]) {
      const result = await anthropic.call(request(), streamed ? { onTextDelta: () => {} } : {});
      texts.push(result.successful && result.result.text);
      // A turn of the event loop, as the service's own work between two calls gives: the agent takes a connection
      // back once the answer is read, and a call made in the same turn would open another.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(texts).toEqual(["One.", "Two.", "Three."]);
    const [first, ...later] = server.messageRequests().map((received) => received.connection);
    expect(later).toEqual([first, first]);
  });

  it("retries a 429 with retry-after as the SDK is configured to, then succeeds", async () => {
    server.script(step.rateLimited(0.05), step.text("After the wait."));
    const result = await provider({ maxRetries: 2 }).call(request());
    expect(result.successful && result.result.text).toBe("After the wait.");
    expect(server.messageRequests()).toHaveLength(2);
    expect(server.messageRequests()[0]?.answer).toMatchObject({ status: 429, kind: "error" });
  });

  it("turns a 429 without retries left into PROVIDER_ERROR with status and type, the request id in the trace", async () => {
    server.script(step.rateLimited(0.01, { headers: { "request-id": "req_429" } }));
    const result = await provider().call(request());
    expect(!result.successful && result.errors[0]).toEqual({
      code: "PROVIDER_ERROR",
      message: expect.any(String),
      details: { provider: "anthropic", status: 429, type: "rate_limit_error" },
    });
    expect(!result.successful && result.trace?.providerResponse).toMatchObject({ requestId: "req_429" });
  });

  it("turns a 500 into PROVIDER_ERROR with status and type, the request id in the trace", async () => {
    server.script(step.error(500, { message: "boom", headers: { "request-id": "req_123" } }));
    const result = await provider().call(request());
    expect(!result.successful && result.errors[0]).toEqual({
      code: "PROVIDER_ERROR",
      message: expect.stringContaining("boom"),
      details: { provider: "anthropic", status: 500, type: "api_error" },
    });
    expect(!result.successful && result.trace?.providerResponse).toMatchObject({
      status: 500,
      requestId: "req_123",
    });
  });

  it("reports the 400 the API answers for a request it rejects", async () => {
    const result = await provider().call(request({ toolChoice: { type: "tool", name: "not_offered" } }));
    expect(!result.successful && result.errors[0]).toMatchObject({
      code: "PROVIDER_ERROR",
      details: { provider: "anthropic", status: 400, type: "invalid_request_error" },
    });
    // The harness's rejection is expected here, not a fault of the adapter.
    server.reset();
  });

  it("turns a timeout, a malformed body, a non-Message body and a dropped connection into PROVIDER_ERROR", async () => {
    server.script(step.text("too late", { delayMs: 1_500 }));
    const late = await provider({ timeoutMs: 300 }).call(request());
    expect(!late.successful && late.errors[0]?.details).toMatchObject({
      provider: "anthropic",
      reason: "timeout",
    });

    server.script(step.raw());
    const malformed = await provider().call(request());
    expect(!malformed.successful && malformed.errors[0]).toMatchObject({
      code: "PROVIDER_ERROR",
      details: { provider: "anthropic", reason: "malformed" },
    });

    server.script(step.raw(JSON.stringify({ hello: "not a message" })));
    const notMessage = await provider().call(request());
    expect(!notMessage.successful && notMessage.errors[0]).toMatchObject({
      message: expect.stringContaining("not a Message"),
      details: { reason: "malformed" },
    });

    server.script(step.drop());
    const dropped = await provider().call(request());
    expect(!dropped.successful && dropped.errors[0]?.details).toMatchObject({
      provider: "anthropic",
      reason: "connection",
    });

    server.script(step.text(["a", "b", "c"], { dropAfterEvents: 4 }));
    const droppedStream = await provider().call(request(), { onTextDelta: () => {} });
    expect(!droppedStream.successful && droppedStream.errors[0]?.details).toMatchObject({
      provider: "anthropic",
      reason: "connection",
    });
  });

  it("turns an error event in the middle of a stream into PROVIDER_ERROR with its type", async () => {
    server.script(step.text(["a", "b"], { streamError: { afterEvents: 4 } }));
    const deltas: string[] = [];
    const result = await provider().call(request(), { onTextDelta: (delta) => deltas.push(delta) });
    expect(deltas).toEqual(["a"]);
    expect(!result.successful && result.errors[0]).toMatchObject({
      code: "PROVIDER_ERROR",
      details: { provider: "anthropic", status: null, type: "overloaded_error" },
    });
  });

  it("counts cache reads and writes into the input tokens and reports cache reads as cached", async () => {
    server.script(
      step.text("cached", {
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 200,
          cache_read_input_tokens: 1000,
          output_tokens: 5,
          output_tokens_details: { thinking_tokens: 2 },
        },
      }),
    );
    const result = await provider().call(request());
    expect(result.successful && result.result.usage).toEqual({
      inputTokens: 1210,
      cachedInputTokens: 1000,
      outputTokens: 5,
      reasoningTokens: 2,
    });
  });

  it("maps stop reasons: max_tokens → length, refusal → content_filter, stop_sequence → stop", async () => {
    server.script(
      step.text("cut", { stopReason: "max_tokens" }),
      step.text("no", { stopReason: "refusal" }),
      step.text("end", { stopReason: "stop_sequence", stopSequence: "###" }),
    );
    const reasons = [];
    for (let i = 0; i < 3; i++) {
      const result = await provider().call(request());
      reasons.push(result.successful && result.result.finishReason);
    }
    expect(reasons).toEqual(["length", "content_filter", "stop"]);
  });

  it("answers a previous_response continuation with a lost continuation, so core replays", async () => {
    const result = await provider().call(
      request({ continuation: { type: "previous_response", responseId: "msg_1" }, input: [] }),
    );
    expect(!result.successful && result.errors[0]?.details).toMatchObject({ reason: CONTINUATION_LOST });
    expect(server.messageRequests()).toHaveLength(0);
  });

  it("fails every call clearly when no API key is configured", async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      const unconfigured = new AnthropicMessagesProvider({ baseURL: server.baseUrl });
      expect(unconfigured).toMatchObject({ id: "anthropic", storesResponses: false });
      const result = await unconfigured.call(request());
      expect(!result.successful && result.errors[0]).toMatchObject({
        code: "PROVIDER_ERROR",
        details: { provider: "anthropic", reason: "not_configured" },
      });
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
    expect(server.messageRequests()).toHaveLength(0);
  });

  it("reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL when no options are given", async () => {
    const saved = { key: process.env.ANTHROPIC_API_KEY, url: process.env.ANTHROPIC_BASE_URL };
    process.env.ANTHROPIC_API_KEY = "from-env";
    process.env.ANTHROPIC_BASE_URL = server.baseUrl;
    try {
      server.script(step.text("env"));
      const result = await new AnthropicMessagesProvider({ maxRetries: 0 }).call(request());
      expect(result.successful && result.result.text).toBe("env");
      const headers = server.messageRequests()[0]?.headers;
      expect(headers?.["x-api-key"] ?? headers?.authorization).toMatch(/from-env/);
    } finally {
      for (const [name, value] of [
        ["ANTHROPIC_API_KEY", saved.key],
        ["ANTHROPIC_BASE_URL", saved.url],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

type Block = { type: string; text?: string };
type SentBody = { system?: Array<{ text: string }>; messages: Array<{ role: string; content: Block[] }> };

/** The first block of the last user message that opens a user turn (not one made of tool results). */
const turnOpening = (sent: SentBody | undefined) =>
  sent?.messages.findLast((message) => message.role === "user" && message.content[0]?.type === "text")
    ?.content[0]?.text;

// The service (AgentService, in-memory stores) on this adapter: Anthropic keeps no state, so every call sends
// `system` again, and it must hold the boot prompt and the *current* mode's instructions (docs/wire-mapping.md).
describe("a mode change on Anthropic, through AgentService", () => {
  it("keeps the current mode's instructions in system, and tells the next user turn the model sees", async () => {
    const agent = new AgentService({
      catalog: catalog(),
      providers: [provider()],
      store: inMemorySessionStores(),
      files: new InMemoryFileStore(),
    });
    const turn = (turnId: string, instruction: string) =>
      agent.execute({ sessionId: "s", turnId, instruction, conversationContextId: "anthropic" }, "alice");
    server.script(
      step.toolUse({
        id: "toolu_mode",
        name: "agent_change_mode",
        input: { mode: "review", reason: "The user wants a review.", branch: false },
      }),
      step.text("Switched."),
      step.error(500),
      step.text("Reviewing."),
      step.text("Done."),
    );

    expect((await turn("t1", "Review my change")).successful).toBe(true);
    // The mode change stays though t2 fails: the model never saw t2, so t3 tells it.
    expect((await turn("t2", "Here it is")).successful).toBe(false);
    expect((await turn("t3", "Here it is again")).successful).toBe(true);
    expect((await turn("t4", "Thanks")).successful).toBe(true);

    const sent = server.messageRequests().map((request) => request.body as SentBody);
    const general = `${BOOT_PROMPT}\n\n${GENERAL_INSTRUCTIONS}`;
    const review = `${BOOT_PROMPT}\n\n${REVIEW_INSTRUCTIONS}`;
    expect(sent.map((body) => body.system?.[0]?.text)).toEqual([general, review, review, review, review]);
    const told = (instruction: string) =>
      `[MODE: review]\n\n[MODE INSTRUCTIONS]\n${REVIEW_INSTRUCTIONS}\n\n[INSTRUCTION]\n${instruction}`;
    expect(sent.map(turnOpening)).toEqual([
      "[MODE: general]\n\n[INSTRUCTION]\nReview my change",
      "[MODE: general]\n\n[INSTRUCTION]\nReview my change",
      told("Here it is"),
      told("Here it is again"),
      "[MODE: review]\n\n[INSTRUCTION]\nThanks",
    ]);
    // The failed turn was rolled back: t3 follows t1 directly.
    expect(sent[3]?.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
  });
});
