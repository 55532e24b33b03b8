import Anthropic from "@anthropic-ai/sdk";
import type {
  MessageCreateParamsNonStreaming,
  MessageParam,
  TextBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import {
  anthropicStep,
  countAnthropicContextTokens,
  type ScriptedAnthropic,
  type ScriptedOpenAI,
  startScriptedAnthropic,
  startScriptedOpenAI,
  step,
} from "../src/index.js";
import { anthropicReadFileTools } from "./support/read-file-tool.js";
import { scriptedServerPerFile } from "./support/scripted-server-per-file.js";

// The prompt caches of both scripted servers, driven by the official SDKs.

const ephemeral = { type: "ephemeral" } as const;
/** A system prompt long enough to be cached (over the 1,024 tokens of the default minimum) on its own. */
const LONG_SYSTEM = Array.from({ length: 300 }, (_, k) => `Rule ${k}: answer briefly.`).join("\n");

describe("the scripted Messages API's prompt cache", () => {
  let server: ScriptedAnthropic;
  scriptedServerPerFile(startScriptedAnthropic, (started) => {
    server = started;
  });
  const client = () => new Anthropic({ apiKey: "test", baseURL: server.baseUrl, maxRetries: 0 });

  /** A request with breakpoints where an adapter puts them: system block, last tool, last message's last block. */
  function marked(messages: MessageParam[]): MessageCreateParamsNonStreaming {
    const last = messages.at(-1);
    const content =
      typeof last?.content === "string" ? [{ type: "text", text: last.content }] : last?.content;
    const lastBlocks = (content ?? []) as TextBlockParam[];
    return {
      model: "claude-test",
      max_tokens: 100,
      system: [{ type: "text", text: LONG_SYSTEM, cache_control: ephemeral }],
      tools: anthropicReadFileTools.map((tool, index, all) =>
        index === all.length - 1 ? { ...tool, cache_control: ephemeral } : tool,
      ),
      messages: [
        ...messages.slice(0, -1),
        {
          role: "user",
          content: [
            ...lastBlocks.slice(0, -1),
            { ...(lastBlocks.at(-1) as TextBlockParam), cache_control: ephemeral },
          ],
        },
      ],
    };
  }

  it("records the breakpoints, writes the prefix up to the last one, and reads it on the next call", async () => {
    server.script(anthropicStep.text("One."), anthropicStep.text("Two."));
    const first = marked([{ role: "user", content: "Question one?" }]);
    const firstAnswer = await client().messages.create(first);
    const second = marked([
      { role: "user", content: "Question one?" },
      { role: "assistant", content: "One." },
      { role: "user", content: "Question two?" },
    ]);
    const secondAnswer = await client().messages.create(second);

    expect(server.messageRequests().map((request) => request.cacheBreakpoints)).toEqual([
      ["tools[0]", "system[0]", "messages[0].content[0]"],
      ["tools[0]", "system[0]", "messages[2].content[0]"],
    ]);
    // Nothing cached yet: the whole prompt is written up to the last breakpoint, which ends it.
    const firstTokens = countAnthropicContextTokens(first as never);
    expect(firstAnswer.usage).toMatchObject({
      input_tokens: 0,
      cache_creation_input_tokens: firstTokens,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: firstTokens, ephemeral_1h_input_tokens: 0 },
    });
    // The first call's whole prompt is read back; only the answer and the new question are written.
    const secondTokens = countAnthropicContextTokens(second as never);
    expect(secondAnswer.usage).toMatchObject({
      input_tokens: 0,
      cache_read_input_tokens: firstTokens,
      cache_creation_input_tokens: secondTokens - firstTokens,
    });
    expect(server.messageRequests().map((request) => request.contextTokens)).toEqual([
      firstTokens,
      secondTokens,
    ]);
  });

  it("bills at full price what follows the last breakpoint, and everything of a request without one", async () => {
    server.script(anthropicStep.text("a"), anthropicStep.text("b"), anthropicStep.text("c"));
    const unmarked: MessageCreateParamsNonStreaming = {
      model: "claude-test",
      max_tokens: 100,
      system: LONG_SYSTEM,
      tools: anthropicReadFileTools,
      messages: [{ role: "user", content: "Hi" }],
    };
    const withTail = {
      ...unmarked,
      system: [{ type: "text" as const, text: LONG_SYSTEM, cache_control: ephemeral }],
    };

    const plain = await client().messages.create(unmarked);
    expect(plain.usage).toMatchObject({
      input_tokens: countAnthropicContextTokens(unmarked as never),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    const written = await client().messages.create(withTail);
    const read = await client().messages.create(withTail);
    const cached = written.usage.cache_creation_input_tokens ?? 0;
    // Tools come before the system prompt: its breakpoint caches both.
    expect(cached).toBe(countAnthropicContextTokens({ tools: anthropicReadFileTools, system: LONG_SYSTEM }));
    expect(written.usage.input_tokens).toBe(countAnthropicContextTokens(unmarked as never) - cached);
    expect(read.usage).toMatchObject({
      input_tokens: written.usage.input_tokens,
      cache_read_input_tokens: cached,
      cache_creation_input_tokens: 0,
    });
  });

  it("caches no prefix shorter than the minimum, and keeps models and a reset apart", async () => {
    server.script(...["a", "b", "c", "d"].map((text) => anthropicStep.text(text)));
    const short: MessageCreateParamsNonStreaming = {
      model: "claude-test",
      max_tokens: 10,
      system: [{ type: "text", text: "Be brief.", cache_control: ephemeral }],
      messages: [{ role: "user", content: "Hi" }],
    };
    await client().messages.create(short);
    expect((await client().messages.create(short)).usage.cache_read_input_tokens).toBe(0);

    const long = marked([{ role: "user", content: "Hi" }]);
    await client().messages.create(long);
    expect((await client().messages.create({ ...long, model: "claude-other" })).usage).toMatchObject({
      cache_read_input_tokens: 0,
    });
    server.reset();
    server.script(anthropicStep.text("e"));
    expect((await client().messages.create(long)).usage.cache_read_input_tokens).toBe(0);
  });

  it("reports the scripted counts when the step scripts any, as before", async () => {
    server.script(anthropicStep.text("a", { usage: { cache_read_input_tokens: 7 } }));
    const answer = await client().messages.create(marked([{ role: "user", content: "Hi" }]));
    expect(answer.usage).toMatchObject({ cache_read_input_tokens: 7, cache_creation_input_tokens: 0 });
    expect(answer.usage.input_tokens).toBe(server.messageRequests()[0]?.contextTokens);
  });

  it("refuses a fifth breakpoint and a cache_control that is not ephemeral, as the API does", async () => {
    server.script(anthropicStep.text("Accepted."));
    const body = marked([
      {
        role: "user",
        content: [
          { type: "text", text: "a", cache_control: ephemeral },
          { type: "text", text: "b" },
        ],
      },
    ]);
    const refused = (create: Promise<unknown>) =>
      create.then(
        () => undefined,
        (error: Error) => error.message,
      );
    expect(await refused(client().messages.create({ ...body, cache_control: ephemeral }))).toContain(
      "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    );
    expect(
      await refused(
        client().messages.create({
          ...body,
          system: [{ type: "text", text: "x", cache_control: { type: "forever" } as never }],
        }),
      ),
    ).toContain("system.0.cache_control");
    expect(await refused(client().messages.create(body))).toBeUndefined();
  });
});

describe("the scripted Responses API's prompt cache", () => {
  let server: ScriptedOpenAI;
  scriptedServerPerFile(startScriptedOpenAI, (started) => {
    server = started;
  });
  const client = () => new OpenAI({ apiKey: "test", baseURL: server.baseUrl, maxRetries: 0 });
  const system: ResponseInputItem = { role: "system", content: LONG_SYSTEM };

  it("reports the repeated prefix of a key as cached_tokens, in steps of 128, and nothing under another key", async () => {
    server.script(...["One.", "Two.", "Three.", "Four."].map((text) => step.text(text)));
    const first = await client().responses.create({
      model: "gpt-test",
      input: [system, { role: "user", content: "Question one?" }],
      prompt_cache_key: "session-a",
    });
    expect(first.usage?.input_tokens_details.cached_tokens).toBe(0);
    const second = await client().responses.create({
      model: "gpt-test",
      previous_response_id: first.id,
      input: [{ role: "user", content: "Question two?" }],
      prompt_cache_key: "session-a",
    });
    const firstTokens = server.responseRequests()[0]?.contextTokens ?? 0;
    expect(firstTokens).toBeGreaterThan(1024);
    expect(second.usage?.input_tokens_details.cached_tokens).toBe(Math.floor(firstTokens / 128) * 128);
    expect(
      server
        .responseRequests()
        .map((request) => (request.body as { prompt_cache_key?: string }).prompt_cache_key),
    ).toEqual(["session-a", "session-a"]);

    const otherKey = await client().responses.create({
      model: "gpt-test",
      input: [system, { role: "user", content: "Question one?" }],
      prompt_cache_key: "session-b",
    });
    expect(otherKey.usage?.input_tokens_details.cached_tokens).toBe(0);
    // A prompt under 1,024 tokens is never cached.
    const short = { model: "gpt-test", input: "Hi", prompt_cache_key: "session-a" };
    await client().responses.create(short);
    server.enqueue(step.text("Five."));
    expect((await client().responses.create(short)).usage?.input_tokens_details.cached_tokens).toBe(0);
  });
});
