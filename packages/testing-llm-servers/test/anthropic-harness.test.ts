import Anthropic, { type APIError } from "@anthropic-ai/sdk";
import type { MessageCreateParamsNonStreaming, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type ScriptedAnthropic,
  startScriptedAnthropic,
  anthropicStep as step,
  validateMessagesRequest,
} from "../src/index.js";
import { anthropicReadFileTools } from "./support/read-file-tool.js";

let server: ScriptedAnthropic;

function client(options: { maxRetries?: number; apiKey?: string } = {}): Anthropic {
  return new Anthropic({
    apiKey: options.apiKey ?? "test",
    baseURL: server.baseUrl,
    maxRetries: options.maxRetries ?? 0,
  });
}

const tools = anthropicReadFileTools;

function params(messages: MessageParam[], extra: Partial<MessageCreateParamsNonStreaming> = {}) {
  return { model: "claude-test", max_tokens: 256, messages, ...extra } as MessageCreateParamsNonStreaming;
}

beforeAll(async () => {
  server = await startScriptedAnthropic();
});

afterEach(() => {
  expect(server.pendingSteps()).toBe(0);
  server.reset();
});

afterAll(async () => {
  await server.close();
});

describe("scripted Messages API driven by the @anthropic-ai/sdk", () => {
  it("answers canned text as a Message at POST /v1/messages", async () => {
    server.script(step.text("Hello from the script."));
    const message = await client().messages.create(
      params([{ role: "user", content: "Hi" }], { system: "You are terse." }),
    );
    expect(message).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [{ type: "text", text: "Hello from the script." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(message.id).toMatch(/^msg_/);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    const [request] = server.requests;
    expect(request).toMatchObject({
      method: "POST",
      path: "/v1/messages",
      stream: false,
      consumedStep: true,
    });
    expect(request?.answer).toMatchObject({ status: 200, kind: "reply", messageId: message.id });
  });

  it("accepts a plain string step and a function of the request as steps", async () => {
    server.script("short form", (request) => `you said ${JSON.stringify(request.body)}`.slice(0, 20));
    const first = await client().messages.create(params([{ role: "user", content: "Hi" }]));
    const second = await client().messages.create(params([{ role: "user", content: "Yo" }]));
    expect(first.content).toMatchObject([{ type: "text", text: "short form" }]);
    expect(second.content).toMatchObject([{ type: "text", text: 'you said {"model":"c' }]);
  });

  it("answers tool_use blocks and takes their tool_result in the next user message", async () => {
    server.script(
      step.toolUse({ name: "read_file", input: { path: "a.cs" }, id: "toolu_1" }),
      step.text("Read."),
    );
    const first = await client().messages.create(params([{ role: "user", content: "Read a.cs" }], { tools }));
    expect(first.stop_reason).toBe("tool_use");
    expect(first.content).toEqual([
      {
        type: "tool_use",
        id: "toolu_1",
        name: "read_file",
        input: { path: "a.cs" },
        caller: { type: "direct" },
      },
    ]);
    const second = await client().messages.create(
      params(
        [
          { role: "user", content: "Read a.cs" },
          { role: "assistant", content: first.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "class A {}" }] },
        ],
        { tools },
      ),
    );
    expect(second.content).toMatchObject([{ type: "text", text: "Read." }]);
  });

  it("streams the real event sequence, which the SDK's MessageStream assembles", async () => {
    server.script(
      step.reply({
        thinking: [{ thinking: "Let me think about it.", signature: "sig" }],
        text: ["It ", "compiles."],
        toolUses: [{ name: "read_file", input: { path: "a/long/enough/path/to/split.cs" }, id: "toolu_9" }],
        chunkDelayMs: 5,
        usage: { input_tokens: 40, output_tokens: 9 },
      }),
    );
    const stream = client().messages.stream(params([{ role: "user", content: "Hi" }], { tools }));
    const texts: string[] = [];
    stream.on("text", (delta) => texts.push(delta));
    const message = await stream.finalMessage();
    expect(texts).toEqual(["It ", "compiles."]);
    expect(message).toMatchObject({
      stop_reason: "tool_use",
      usage: { input_tokens: 40, output_tokens: 9 },
      content: [
        { type: "thinking", thinking: "Let me think about it.", signature: "sig" },
        { type: "text", text: "It compiles." },
        {
          type: "tool_use",
          id: "toolu_9",
          name: "read_file",
          input: { path: "a/long/enough/path/to/split.cs" },
        },
      ],
    });
    const events = server.requests[0]?.events ?? [];
    expect(events.map((e) => e.type)).toEqual([
      "message_start",
      "ping",
      // thinking: five words, then the signature
      ...["content_block_start", "content_block_delta", "content_block_delta", "content_block_delta"],
      ...["content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop"],
      ...["content_block_start", "content_block_delta", "content_block_delta", "content_block_stop"],
      ...["content_block_start", "content_block_delta", "content_block_delta", "content_block_stop"],
      "message_delta",
      "message_stop",
    ]);
    expect(events[0]).toMatchObject({ message: { content: [], stop_reason: null } });
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } });
  });

  it("answers errors with Anthropic's body and request-id header, which the SDK reads", async () => {
    server.script(step.error(400, { message: "bad thing" }), step.overloaded());
    const error = await client()
      .messages.create(params([{ role: "user", content: "Hi" }]))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error).toMatchObject({ status: 400, type: "invalid_request_error", apiMessage: "bad thing" });
    expect((error as APIError).requestID).toMatch(/^req_/);
    expect(server.requests[0]?.answer?.body).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: "bad thing" },
      request_id: (error as APIError).requestID,
    });
    const overloaded = await client()
      .messages.create(params([{ role: "user", content: "Hi" }]))
      .catch((e: unknown) => e);
    expect(overloaded).toMatchObject({ status: 529, type: "overloaded_error" });
  });

  it("lets the SDK retry 429 (retry-after) and 500, then answers", async () => {
    server.script(
      step.rateLimited(0.02),
      step.error(500, { headers: { "retry-after": "0.02" } }),
      step.text("finally"),
    );
    const message = await client({ maxRetries: 2 }).messages.create(
      params([{ role: "user", content: "Hi" }]),
    );
    expect(message.content).toMatchObject([{ type: "text", text: "finally" }]);
    expect(server.requests.map((r) => r.answer?.status)).toEqual([429, 500, 200]);
    expect(server.requests[0]?.answer?.kind).toBe("error");
    expect(server.requests.map((r) => r.headers["x-stainless-retry-count"])).toEqual(["0", "1", "2"]);
  });

  it("checks the API key when configured, and answers 404 for other routes", async () => {
    const guarded = await startScriptedAnthropic({ apiKey: "sk-right" });
    try {
      guarded.script(step.text("in"));
      const denied = await new Anthropic({
        apiKey: "sk-wrong",
        baseURL: guarded.baseUrl,
        maxRetries: 0,
      }).messages
        .create(params([{ role: "user", content: "Hi" }]))
        .catch((e: unknown) => e);
      expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
      const allowed = await new Anthropic({
        apiKey: "sk-right",
        baseURL: guarded.baseUrl,
        maxRetries: 0,
      }).messages.create(params([{ role: "user", content: "Hi" }]));
      expect(allowed.content).toMatchObject([{ type: "text", text: "in" }]);
    } finally {
      await guarded.close();
    }
    const notFound = await fetch(`${server.baseUrl}/v1/complete`, { method: "POST" });
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  });

  it("fails loudly, without SDK retries, when the script runs out", async () => {
    const error = await client({ maxRetries: 2 })
      .messages.create(params([{ role: "user", content: "Hi" }]))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500, type: "harness_error" });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.answer?.kind).toBe("exhausted");
  });

  it("sends raw bodies, drops connections and waits as scripted", async () => {
    server.script(step.raw("{not json"), step.drop(), step.text("slow", { delayMs: 120 }));
    await expect(client().messages.create(params([{ role: "user", content: "Hi" }]))).rejects.toThrow();
    await expect(client().messages.create(params([{ role: "user", content: "Hi" }]))).rejects.toBeInstanceOf(
      Anthropic.APIConnectionError,
    );
    const started = Date.now();
    await client().messages.create(params([{ role: "user", content: "Hi" }]));
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
  });
});

describe("request validation: what the real API rejects answers 400 invalid_request_error", () => {
  const toolUse = (id: string) => ({
    type: "tool_use" as const,
    id,
    name: "read_file",
    input: { path: "a" },
  });
  const toolResult = (id: string) => ({ type: "tool_result" as const, tool_use_id: id, content: "ok" });

  const cases: Array<[string, unknown, RegExp]> = [
    [
      "a system role message in messages",
      params([
        { role: "system", content: "You are Aptix." } as unknown as MessageParam,
        { role: "user", content: "Hi" },
      ]),
      /^messages\.0: role 'system' is not supported on this model/,
    ],
    [
      "a tool_use not answered in the very next user message",
      params(
        [
          { role: "user", content: "Read" },
          { role: "assistant", content: [toolUse("toolu_1")] },
          { role: "user", content: "go on" },
        ],
        { tools },
      ),
      /^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1\./,
    ],
    [
      "a tool_use whose tool_result comes only two messages later",
      params(
        [
          { role: "user", content: "Read" },
          { role: "assistant", content: [toolUse("toolu_1")] },
          { role: "user", content: "wait" },
          { role: "assistant", content: "ok" },
          { role: "user", content: [toolResult("toolu_1")] },
        ],
        { tools },
      ),
      /^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1\./,
    ],
    [
      "a tool_result that is not first in its user message",
      params(
        [
          { role: "user", content: "Read" },
          { role: "assistant", content: [toolUse("toolu_1")] },
          { role: "user", content: [{ type: "text", text: "here:" }, toolResult("toolu_1")] },
        ],
        { tools },
      ),
      /^messages\.2: Did not find 1 `tool_result` block\(s\) at the beginning of this message\./,
    ],
    [
      "a tool_result that answers no tool_use",
      params(
        [
          { role: "user", content: "Read" },
          { role: "assistant", content: [toolUse("toolu_1")] },
          { role: "user", content: [toolResult("toolu_1"), toolResult("toolu_other")] },
        ],
        { tools },
      ),
      /^messages\.2\.content\.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_other\./,
    ],
    [
      "two consecutive messages with the same role",
      params([
        { role: "user", content: "Hi" },
        { role: "user", content: "again" },
      ]),
      /^messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row$/,
    ],
    [
      "a first message that is not user",
      params([
        { role: "assistant", content: "Hello" },
        { role: "user", content: "Hi" },
      ]),
      /^messages: first message must use the "user" role$/,
    ],
    [
      "a missing max_tokens",
      { model: "claude-test", messages: [{ role: "user", content: "Hi" }] },
      /^max_tokens: Field required$/,
    ],
    [
      "a missing model",
      { max_tokens: 10, messages: [{ role: "user", content: "Hi" }] },
      /^model: Field required$/,
    ],
    [
      "an empty message content",
      params([{ role: "user", content: [] }]),
      /^messages\.0: all messages must have non-empty content except for the optional final assistant message$/,
    ],
    [
      "an empty text block",
      params([{ role: "user", content: [{ type: "text", text: "" }] }]),
      /^messages: text content blocks must be non-empty$/,
    ],
    [
      "an unknown parameter",
      { ...params([{ role: "user", content: "Hi" }]), max_output_tokens: 5 },
      /^max_output_tokens: Extra inputs are not permitted$/,
    ],
    [
      "a forced tool that is not offered",
      params([{ role: "user", content: "Hi" }], { tools, tool_choice: { type: "tool", name: "write_file" } }),
      /^tool_choice\.name: Tool 'write_file' not found/,
    ],
  ];

  it.each(cases)("rejects %s", async (_name, body, message) => {
    const error = await client()
      .messages.create(body as unknown as MessageCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error).toMatchObject({ status: 400, type: "invalid_request_error" });
    expect((error as APIError).apiMessage).toMatch(message);
    expect(server.requests[0]?.validationError).toMatch(message);
    // A rejected request consumes no step.
    expect(server.requests[0]?.consumedStep).toBe(false);
  });

  it("rejects invalid JSON and a missing anthropic-version header", async () => {
    const headers = {
      "content-type": "application/json",
      "x-api-key": "test",
      "anthropic-version": "2023-06-01",
    };
    const invalid = await fetch(`${server.baseUrl}/v1/messages`, { method: "POST", headers, body: "{nope" });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    const { "anthropic-version": _omitted, ...unversioned } = headers;
    const missing = await fetch(`${server.baseUrl}/v1/messages`, {
      method: "POST",
      headers: unversioned,
      body: JSON.stringify(params([{ role: "user", content: "Hi" }])),
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      error: { message: "anthropic-version: header is required" },
    });
  });

  it("accepts a valid conversation: tool results first, then text, thinking replayed, a final assistant prefill", () => {
    expect(
      validateMessagesRequest(
        params(
          [
            { role: "user", content: "Read a and b" },
            {
              role: "assistant",
              content: [
                { type: "thinking", thinking: "two", signature: "sig" },
                { type: "text", text: "Reading." },
                toolUse("toolu_a"),
                toolUse("toolu_b"),
              ],
            },
            {
              role: "user",
              content: [
                toolResult("toolu_b"),
                { ...toolResult("toolu_a"), is_error: true },
                { type: "text", text: "and?" },
              ],
            },
            { role: "assistant", content: "" },
          ],
          { tools, tool_choice: { type: "auto" }, system: "sys" },
        ),
      ),
    ).toBeUndefined();
  });

  it("can act like the current API instead: same-role messages merged, system messages after a user turn", async () => {
    const lenient = await startScriptedAnthropic({ sameRoleMessages: "merge", systemMessages: "after_user" });
    try {
      lenient.script(step.text("ok"));
      const messages = [
        { role: "user", content: "Hi" },
        { role: "system", content: "Now answer in French." },
        { role: "user", content: "again" },
      ] as MessageParam[];
      const answer = await new Anthropic({
        apiKey: "t",
        baseURL: lenient.baseUrl,
        maxRetries: 0,
      }).messages.create(params(messages));
      expect(answer.content).toMatchObject([{ type: "text", text: "ok" }]);
      expect(
        validateMessagesRequest(params([{ role: "system", content: "x" } as unknown as MessageParam]), {
          systemMessages: "after_user",
        }),
      ).toBe("messages.0: a `system` message must immediately follow a `user` message");
    } finally {
      await lenient.close();
    }
  });

  it("records instead of rejecting with validation: record", async () => {
    const recording = await startScriptedAnthropic({ validation: "record" });
    try {
      recording.script(step.text("went through"));
      const answer = await new Anthropic({
        apiKey: "t",
        baseURL: recording.baseUrl,
        maxRetries: 0,
      }).messages.create(
        params([
          { role: "user", content: "a" },
          { role: "user", content: "b" },
        ]),
      );
      expect(answer.content).toMatchObject([{ type: "text", text: "went through" }]);
      expect(recording.requests[0]?.validationError).toMatch(/roles must alternate/);
    } finally {
      await recording.close();
    }
  });
});
