import Anthropic, { type APIError } from "@anthropic-ai/sdk";
import type { MessageCreateParamsNonStreaming, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
  countAnthropicContextTokens,
  ITEM_OVERHEAD_TOKENS,
  MEDIA_PART_TOKENS,
  type ScriptedAnthropic,
  startScriptedAnthropic,
  anthropicStep as step,
} from "../src/index.js";
import { anthropicReadFileTools } from "./support/read-file-tool.js";
import { scriptedServerPerFile } from "./support/scripted-server-per-file.js";

let server: ScriptedAnthropic;

function client(): Anthropic {
  return new Anthropic({ apiKey: "test", baseURL: server.baseUrl, maxRetries: 0 });
}

const tools = anthropicReadFileTools;
const system = "You are a careful coding agent.";
const fileText = "public class Program { static void Main() { System.Console.WriteLine(42); } }\n".repeat(40);

function params(messages: MessageParam[]): MessageCreateParamsNonStreaming {
  return { model: "claude-test", max_tokens: 256, system, tools, messages };
}

const question: MessageParam = { role: "user", content: "What does Program.cs print?" };
const toolUse: MessageParam = {
  role: "assistant",
  content: [{ type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "Program.cs" } }],
};
const toolResult: MessageParam = {
  role: "user",
  content: [{ type: "tool_result", tool_use_id: "toolu_1", content: fileText }],
};

scriptedServerPerFile(startScriptedAnthropic, (started) => {
  server = started;
});

describe("the scripted Messages API counts each request's context", () => {
  it("counts system, tools and all messages, growing with the conversation, and reports it as usage", async () => {
    server.script(
      step.toolUse({ name: "read_file", input: { path: "Program.cs" }, id: "toolu_1" }),
      step.text("It prints 42."),
      step.text("Nothing else."),
    );
    const anthropic = client();
    const conversations: MessageParam[][] = [
      [question],
      [question, toolUse, toolResult],
      [
        question,
        toolUse,
        toolResult,
        { role: "assistant", content: "It prints 42." },
        { role: "user", content: "Anything else?" },
      ],
    ];
    const messages: Anthropic.Message[] = [];
    for (const conversation of conversations)
      messages.push(await anthropic.messages.create(params(conversation)));

    const requests = server.messageRequests();
    const counts = requests.map((r) => r.contextTokens ?? 0);
    expect(counts[1]).toBeGreaterThanOrEqual((counts[0] ?? 0) + countTokens(fileText));
    expect(counts[2]).toBeGreaterThan(counts[1] ?? 0);
    requests.forEach((request, i) => {
      expect(request.contextTokens).toBe(countAnthropicContextTokens(request.body as object));
      expect(request).toMatchObject({ contextOverflow: false, consumedStep: true });
      expect(messages[i]?.usage.input_tokens).toBe(request.contextTokens);
    });
    expect(counts[0]).toBe(
      3 * ITEM_OVERHEAD_TOKENS +
        countTokens(system) +
        countTokens(JSON.stringify(tools[0])) +
        countTokens("What does Program.cs print?"),
    );
    expect(messages[0]?.usage.output_tokens).toBe(
      countTokens("read_file") + countTokens('{"path":"Program.cs"}'),
    );
    expect(messages[1]?.usage.output_tokens).toBe(countTokens("It prints 42."));
  });

  it("reports the count in a stream's message_start and the output in its message_delta; scripted usage stays", async () => {
    server.script(
      step.text("Counted."),
      step.text("Scripted.", { usage: { input_tokens: 7, output_tokens: 3 } }),
    );
    const stream = await client().messages.create({ ...params([question]), stream: true });
    const usage: Record<string, unknown> = {};
    for await (const event of stream) {
      if (event.type === "message_start") usage.start = event.message.usage.input_tokens;
      if (event.type === "message_delta") usage.delta = event.usage.output_tokens;
    }
    expect(usage).toEqual({
      start: server.messageRequests()[0]?.contextTokens,
      delta: countTokens("Counted."),
    });

    const scripted = await client().messages.create(params([question]));
    expect(scripted.usage).toMatchObject({ input_tokens: 7, output_tokens: 3 });
    expect(server.messageRequests()[1]?.contextTokens).toBe(server.messageRequests()[0]?.contextTokens);
  });
});

describe("past the context window the scripted Messages API refuses as the real API does", () => {
  it("answers 400 'prompt is too long: N tokens > M maximum', records the request and consumes no step", async () => {
    const window = countAnthropicContextTokens(params([question, toolUse])) + 50;
    server.setContextWindow(window);
    server.script(step.text("It prints 42."));

    const error = await client()
      .messages.create(params([question, toolUse, toolResult]))
      .catch((e: unknown) => e);
    const refused = server.messageRequests()[0];
    const counted = refused?.contextTokens ?? 0;
    expect(counted).toBeGreaterThan(window);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error).toMatchObject({
      status: 400,
      type: "invalid_request_error",
      apiMessage: `prompt is too long: ${counted} tokens > ${window} maximum`,
    });
    const requestId = (error as APIError).requestID;
    expect(requestId).toMatch(/^req_/);
    expect(refused?.answer?.body).toEqual({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: `prompt is too long: ${counted} tokens > ${window} maximum`,
      },
      request_id: requestId,
    });
    expect(refused).toMatchObject({
      contextOverflow: true,
      contextWindowTokens: window,
      consumedStep: false,
    });

    // A stream is refused before it starts: the same 400.
    const streamed = await client()
      .messages.create({ ...params([question, toolUse, toolResult]), stream: true })
      .catch((e: unknown) => e);
    expect(streamed).toMatchObject({ status: 400, type: "invalid_request_error" });
    expect(server.pendingSteps()).toBe(1);

    server.setContextWindow(counted);
    const answered = await client().messages.create(params([question, toolUse, toolResult]));
    expect(answered.content).toEqual([{ type: "text", text: "It prints 42.", citations: null }]);
    const sent = server.messageRequests().filter((r) => !r.contextOverflow);
    expect(sent.map((r) => r.contextTokens)).toEqual([counted]);
  });
});

describe("the context window setting", () => {
  it.each([0, -5, 2.5, Number.NaN, "200000"])(
    "refuses %s with an error naming contextWindowTokens, and keeps the window it had",
    async (bad) => {
      await expect(startScriptedAnthropic({ contextWindowTokens: bad as number })).rejects.toThrow(
        /contextWindowTokens must be a positive whole number/,
      );
      server.setContextWindow(5);
      expect(() => server.setContextWindow(bad as number)).toThrow(RangeError);
      const error = await client()
        .messages.create(params([question]))
        .catch((e: unknown) => e);
      expect(error).toMatchObject({
        status: 400,
        apiMessage: expect.stringMatching(/^prompt is too long: \d+ tokens > 5 maximum$/),
      });
    },
  );

  it("takes a window at start", async () => {
    const small = await startScriptedAnthropic({ contextWindowTokens: 3 });
    try {
      const error = await new Anthropic({ apiKey: "test", baseURL: small.baseUrl, maxRetries: 0 }).messages
        .create(params([question]))
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400, apiMessage: expect.stringMatching(/> 3 maximum$/) });
      expect(small.messageRequests()[0]).toMatchObject({ contextWindowTokens: 3, contextOverflow: true });
    } finally {
      await small.close();
    }
  });
});

describe("countAnthropicContextTokens", () => {
  it("is deterministic", () => {
    const body = params([question, toolUse, toolResult]);
    expect(countAnthropicContextTokens(body)).toBe(countAnthropicContextTokens(structuredClone(body)));
    expect(countAnthropicContextTokens({})).toBe(0);
  });

  it("counts tool_use names and inputs as JSON, tool_result contents and images", () => {
    expect(countAnthropicContextTokens({ messages: [toolUse] })).toBe(
      ITEM_OVERHEAD_TOKENS + countTokens("read_file") + countTokens('{"path":"Program.cs"}'),
    );
    expect(countAnthropicContextTokens({ messages: [toolResult] })).toBe(
      ITEM_OVERHEAD_TOKENS + countTokens(fileText),
    );
    const blocks: MessageParam = {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: [
            { type: "text", text: fileText },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
          ],
        },
        { type: "text", text: "Text that says <|endoftext|>." },
      ],
    };
    expect(countAnthropicContextTokens({ messages: [blocks] })).toBe(
      ITEM_OVERHEAD_TOKENS +
        countTokens(fileText) +
        MEDIA_PART_TOKENS +
        countTokens("Text that says <|endoftext|>.", { disallowedSpecial: new Set() }),
    );
  });

  it("counts a system prompt given as blocks as its text", () => {
    expect(countAnthropicContextTokens({ system: [{ type: "text", text: system }] })).toBe(
      countAnthropicContextTokens({ system }),
    );
    expect(countAnthropicContextTokens({ system })).toBe(ITEM_OVERHEAD_TOKENS + countTokens(system));
  });
});
