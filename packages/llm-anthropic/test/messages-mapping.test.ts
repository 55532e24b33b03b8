import Anthropic from "@anthropic-ai/sdk";
import type { ContentBlock, Message } from "@anthropic-ai/sdk/resources/messages";
import type { TranscriptItem } from "@aptix/core";
import { describe, expect, it } from "vitest";
import { withCacheBreakpoints } from "../src/cache-breakpoints.js";
import { finishReason, fromAnthropicMessage, usageOf } from "../src/from-anthropic-message.js";
import { providerError } from "../src/provider-error.js";
import { toAnthropicMessages } from "../src/to-anthropic-messages.js";

// Over-HTTP behaviour (the SDK against the scripted server) is tested in anthropic-adapter.test.ts; these pin the
// mapping rules that the wire tests cannot reach one by one.

const user = (text: string): TranscriptItem => ({ type: "user_message", content: [{ type: "text", text }] });
const call = (callId: string, argumentsJson = "{}"): TranscriptItem => ({
  type: "function_call",
  callId,
  name: "read_file",
  argumentsJson,
});
const output = (callId: string, text: string, isError = false): TranscriptItem => ({
  type: "function_call_output",
  callId,
  output: text,
  isError,
});
const base64 = (text: string) => Buffer.from(text).toString("base64");

function message(fields: Partial<Message>): Message {
  return {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content: [],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
    ...fields,
  } as Message;
}

describe("toAnthropicMessages", () => {
  it("moves every system message to the top-level system, joined with blank lines", () => {
    const conversation = toAnthropicMessages([
      { type: "system_message", text: "Boot." },
      user("Hi"),
      { type: "assistant_message", text: "Hello" },
      { type: "system_message", text: "[MODE: review]" },
      user("Review"),
    ]);
    expect(conversation.system).toBe("Boot.\n\n[MODE: review]");
    expect(conversation.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  });

  it("leaves system out when there is none", () => {
    expect(toAnthropicMessages([user("Hi")])).toEqual({
      messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
    });
  });

  it("merges consecutive items of one role into one message", () => {
    const { messages } = toAnthropicMessages([
      user("a"),
      user("b"),
      { type: "assistant_message", text: "c" },
      call("toolu_1"),
      output("toolu_1", "ok"),
      user("d"),
    ]);
    expect(messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "c" },
          { type: "tool_use", id: "toolu_1", name: "read_file", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "ok", is_error: false },
          { type: "text", text: "d" },
        ],
      },
    ]);
  });

  it("puts tool results before the other blocks of their user message, in their own order", () => {
    const { messages } = toAnthropicMessages([
      user("go"),
      call("toolu_1"),
      call("toolu_2"),
      user("extra context"),
      output("toolu_1", "one"),
      output("toolu_2", "failed", true),
    ]);
    expect(messages[2]?.content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_1", content: "one", is_error: false },
      { type: "tool_result", tool_use_id: "toolu_2", content: "failed", is_error: true },
      { type: "text", text: "extra context" },
    ]);
  });

  it("parses arguments into the tool_use input object, keeping what is not a JSON object as text", () => {
    const { messages } = toAnthropicMessages([
      user("go"),
      call("a", '{"path":"x","n":[1,2]}'),
      call("b", ""),
      call("c", "[1,2]"),
      call("d", "not json"),
    ]);
    expect(messages[1]?.content.map((block) => (block.type === "tool_use" ? block.input : null))).toEqual([
      { path: "x", n: [1, 2] },
      {},
      { arguments: "[1,2]" },
      { arguments: "not json" },
    ]);
  });

  it("replays Anthropic thinking blocks verbatim and drops other providers' reasoning", () => {
    const { messages } = toAnthropicMessages([
      user("think"),
      { type: "reasoning", provider: "openai", data: { id: "rs_1", type: "reasoning", summary: [] } },
      {
        type: "reasoning",
        provider: "anthropic",
        data: { type: "thinking", thinking: "hm", signature: "s" },
      },
      { type: "reasoning", provider: "anthropic", data: { type: "redacted_thinking", data: "EuYB" } },
      { type: "reasoning", provider: "anthropic", data: { type: "thinking", thinking: "no signature" } },
      { type: "assistant_message", text: "Done." },
    ]);
    expect(messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hm", signature: "s" },
        { type: "redacted_thinking", data: "EuYB" },
        { type: "text", text: "Done." },
      ],
    });
  });

  it("leaves out empty and blank texts, which the API rejects", () => {
    const { messages } = toAnthropicMessages([
      {
        type: "user_message",
        content: [
          { type: "text", text: "" },
          { type: "text", text: "Hi" },
          { type: "text", text: " \n" },
        ],
      },
      { type: "assistant_message", text: "\n\n" },
      call("toolu_1"),
    ]);
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Hi" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "read_file", input: {} }] },
    ]);
  });

  it("sends images as base64 image blocks and PDFs as document blocks", () => {
    const { messages } = toAnthropicMessages([
      {
        type: "user_message",
        content: [
          { type: "image", mimeType: "image/webp", dataBase64: "UklGRg==" },
          { type: "file", fileName: "spec.pdf", mimeType: "application/pdf", dataBase64: "JVBERi0=" },
        ],
      },
    ]);
    expect(messages[0]?.content).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/webp", data: "UklGRg==" } },
      {
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" },
        title: "spec.pdf",
      },
    ]);
  });

  it("sends other text files as a text block naming the file, binaries as a note", () => {
    const { messages } = toAnthropicMessages([
      {
        type: "user_message",
        content: [
          {
            type: "file",
            fileName: "notes.md",
            mimeType: "text/markdown",
            dataBase64: base64("# Ünïcode\n\tok\r\n"),
          },
          {
            type: "file",
            fileName: "data.json",
            mimeType: "application/json",
            dataBase64: base64('{"a":1}'),
          },
          { type: "file", fileName: "a.zip", mimeType: "application/zip", dataBase64: "UEsDBBQAAAAIAA==" },
          { type: "file", fileName: "x.bin", mimeType: "application/octet-stream", dataBase64: "/w==" },
          { type: "image", mimeType: "image/svg+xml", dataBase64: base64("<svg/>") },
        ],
      },
    ]);
    expect(messages[0]?.content).toEqual([
      { type: "text", text: "File notes.md (text/markdown):\n\n# Ünïcode\n\tok\r\n" },
      { type: "text", text: 'File data.json (application/json):\n\n{"a":1}' },
      {
        type: "text",
        text: "File a.zip (application/zip, 10 bytes) was attached. It is a binary file, so its content cannot be shown here.",
      },
      {
        type: "text",
        text: "File x.bin (application/octet-stream, 1 bytes) was attached. It is a binary file, so its content cannot be shown here.",
      },
      { type: "text", text: "An image (image/svg+xml):\n\n<svg/>" },
    ]);
  });
});

describe("withCacheBreakpoints", () => {
  const ephemeral = { type: "ephemeral" };

  it("marks the system block and the last block of the last message, and changes nothing it was given", () => {
    const { system, messages } = toAnthropicMessages([
      { type: "system_message", text: "Boot." },
      user("Read a.ts"),
      call("toolu_a"),
      output("toolu_a", "export {}"),
      output("toolu_b", "missing", true),
    ]);
    const body = { model: "claude-test", max_tokens: 10, system, messages };
    const given = structuredClone(body);
    const marked = withCacheBreakpoints(body);
    expect(marked.system).toEqual([{ type: "text", text: "Boot.", cache_control: ephemeral }]);
    expect(marked.messages.at(-1)?.content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_a", content: "export {}", is_error: false },
      {
        type: "tool_result",
        tool_use_id: "toolu_b",
        content: "missing",
        is_error: true,
        cache_control: ephemeral,
      },
    ]);
    // Only the last message: the earlier ones are the prefix a later call reads from the cache.
    expect(marked.messages.slice(0, -1)).toEqual(given.messages.slice(0, -1));
    expect(body).toEqual(given);
  });

  it("never marks a thinking block, and leaves out a system prompt there is none of", () => {
    const thinking = { type: "thinking", thinking: "Hmm.", signature: "sig" };
    const { messages } = toAnthropicMessages([
      user("Hi"),
      { type: "assistant_message", text: "Let me think." },
      { type: "reasoning", provider: "anthropic", data: thinking },
    ]);
    const marked = withCacheBreakpoints({ model: "claude-test", max_tokens: 10, messages });
    expect(marked).not.toHaveProperty("system");
    expect(marked.messages.at(-1)?.content).toEqual([
      { type: "text", text: "Let me think.", cache_control: ephemeral },
      thinking,
    ]);
  });
});

describe("fromAnthropicMessage", () => {
  it("keeps content order: thinking, text, tool calls; skips server tool blocks", () => {
    const content = [
      { type: "thinking", thinking: "hm", signature: "s" },
      { type: "text", text: "Looking.", citations: null },
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} },
      {
        type: "tool_use",
        id: "toolu_1",
        name: "read_file",
        input: { path: "a" },
        caller: { type: "direct" },
      },
      { type: "text", text: " More.", citations: null },
    ] as ContentBlock[];
    const result = fromAnthropicMessage(message({ content, stop_reason: "tool_use" }), { sent: true });
    if (!result.successful) throw new Error(result.errors[0].message);
    expect(result.result.output).toEqual([
      { type: "reasoning", provider: "anthropic", data: content[0] },
      { type: "assistant_message", text: "Looking." },
      { type: "function_call", callId: "toolu_1", name: "read_file", argumentsJson: '{"path":"a"}' },
      { type: "assistant_message", text: " More." },
    ]);
    expect(result.result.text).toBe("Looking. More.");
    expect(result.result.finishReason).toBe("tool_calls");
    expect(result.result.responseId).toBeUndefined();
    expect(result.result.trace).toEqual({
      providerRequest: { sent: true },
      providerResponse: expect.any(Object),
    });
  });

  it("turns a body that is not a Message into PROVIDER_ERROR", () => {
    for (const body of [null, "text", { hello: "world" }, { content: "not a list" }]) {
      const result = fromAnthropicMessage(body as unknown as Message, {});
      expect(!result.successful && result.errors[0]).toMatchObject({
        code: "PROVIDER_ERROR",
        details: { provider: "anthropic", reason: "malformed" },
      });
    }
  });

  it("maps stop reasons", () => {
    expect(
      ["end_turn", "stop_sequence", "tool_use", "max_tokens", "model_context_window_exceeded", "refusal"].map(
        finishReason,
      ),
    ).toEqual(["stop", "stop", "tool_calls", "length", "length", "content_filter"]);
    expect([finishReason("pause_turn"), finishReason(null), finishReason("something_new")]).toEqual([
      "other",
      "other",
      "other",
    ]);
  });

  it("adds cache reads and writes to the input tokens; only reports what the answer had", () => {
    expect(
      usageOf({
        input_tokens: 3,
        cache_creation_input_tokens: 20,
        cache_read_input_tokens: 100,
        output_tokens: 4,
        output_tokens_details: { thinking_tokens: 2 },
      }),
    ).toEqual({ inputTokens: 123, cachedInputTokens: 100, outputTokens: 4, reasoningTokens: 2 });
    expect(
      usageOf({
        input_tokens: 3,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: null,
        output_tokens: 4,
      }),
    ).toEqual({ inputTokens: 3, outputTokens: 4 });
    expect(usageOf(undefined)).toEqual({ inputTokens: 0, outputTokens: 0 });
  });
});

describe("providerError", () => {
  it("keeps status and type of an API error in the details, its request id in the trace", () => {
    const error = Anthropic.APIError.generate(
      429,
      { type: "error", error: { type: "rate_limit_error", message: "slow down" } },
      undefined,
      new Headers({ "request-id": "req_1" }),
    );
    const failure = providerError(error, { model: "m" });
    expect(failure.errors[0]).toEqual({
      code: "PROVIDER_ERROR",
      message: "Anthropic answered 429: slow down",
      details: { provider: "anthropic", status: 429, type: "rate_limit_error" },
    });
    expect(failure.trace).toEqual({
      providerRequest: { model: "m" },
      providerResponse: {
        status: 429,
        requestId: "req_1",
        body: { type: "error", error: { type: "rate_limit_error", message: "slow down" } },
      },
    });
  });

  it("keeps the type of an error event in a stream, which has no status", () => {
    const error = new Anthropic.APIError(
      undefined,
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      undefined,
      new Headers(),
    );
    expect(providerError(error, {}).errors[0]?.details).toEqual({
      provider: "anthropic",
      status: null,
      type: "overloaded_error",
    });
  });

  it("tells timeouts, lost connections, cancellations and unreadable answers apart", () => {
    const reason = (error: unknown) => providerError(error, {}).errors[0]?.details?.reason;
    expect(reason(new Anthropic.APIConnectionTimeoutError())).toBe("timeout");
    expect(reason(new Anthropic.APIConnectionError({ message: "refused" }))).toBe("connection");
    expect(reason(new Anthropic.APIUserAbortError())).toBe("aborted");
    const wrappedDrop = Object.assign(new Anthropic.AnthropicError("terminated"), {
      cause: new TypeError("terminated"),
    });
    expect(reason(wrappedDrop)).toBe("connection");
    expect(reason(new SyntaxError("Unexpected end of JSON input"))).toBe("malformed");
    expect(reason(new Anthropic.AnthropicError("request ended without sending any chunks"))).toBe(
      "malformed",
    );
  });
});
