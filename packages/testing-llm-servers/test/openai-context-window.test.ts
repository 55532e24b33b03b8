import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import {
  countOpenAIContextTokens,
  ITEM_OVERHEAD_TOKENS,
  MEDIA_PART_TOKENS,
  type ScriptedOpenAI,
  startScriptedOpenAI,
  step,
} from "../src/index.js";
import { openAIReadFileTools } from "./support/read-file-tool.js";
import { scriptedServerPerFile } from "./support/scripted-server-per-file.js";

let server: ScriptedOpenAI;

function client(): OpenAI {
  return new OpenAI({ apiKey: "test", baseURL: server.baseUrl, maxRetries: 0 });
}

const tools = openAIReadFileTools;

const instructions = "You are a careful coding agent.";
const fileText = "public class Program { static void Main() { System.Console.WriteLine(42); } }\n".repeat(40);

/** What a request's body adds to the chain it continues: its input as items. */
function inputOf(body: unknown): ResponseInputItem[] {
  const input = (body as { input?: unknown }).input;
  return typeof input === "string" ? [{ role: "user", content: input }] : (input as ResponseInputItem[]);
}

/** The context count the server should have recorded for a request: the chain so far, then this request. */
function expectedCount(body: unknown): number {
  const { instructions: ins, tools: defs, previous_response_id: previous } = body as Record<string, unknown>;
  const chain = typeof previous === "string" ? server.transcript(previous) : [];
  return countOpenAIContextTokens({ instructions: ins, tools: defs, items: [...chain, ...inputOf(body)] });
}

/** Three calls of one chain: a read_file call, its (long) output, then a question. */
async function runChain(openai: OpenAI) {
  server.script(
    step.functionCalls({ name: "read_file", arguments: { path: "Program.cs" }, callId: "call_1" }),
    step.text("It prints 42."),
    step.text("Nothing else."),
  );
  const first = await openai.responses.create({
    model: "gpt-5.1",
    instructions,
    input: "What does Program.cs print?",
    tools,
  });
  const second = await openai.responses.create({
    model: "gpt-5.1",
    instructions,
    previous_response_id: first.id,
    input: [{ type: "function_call_output", call_id: "call_1", output: fileText }],
    tools,
  });
  const third = await openai.responses.create({
    model: "gpt-5.1",
    instructions,
    previous_response_id: second.id,
    input: "Anything else?",
    tools,
  });
  return [first, second, third];
}

scriptedServerPerFile(startScriptedOpenAI, (started) => {
  server = started;
});

describe("the scripted Responses API counts each request's context", () => {
  it("counts the whole previous_response_id chain, growing with each call, and reports it as usage", async () => {
    const responses = await runChain(client());
    const requests = server.responseRequests();
    const counts = requests.map((r) => r.contextTokens ?? 0);

    expect(counts[1]).toBeGreaterThanOrEqual((counts[0] ?? 0) + countTokens(fileText));
    expect(counts[2]).toBeGreaterThan(counts[1] ?? 0);
    requests.forEach((request, i) => {
      expect(request.contextTokens).toBe(expectedCount(request.body));
      expect(request).toMatchObject({
        contextOverflow: false,
        contextWindowTokens: undefined,
        consumedStep: true,
      });
      expect(responses[i]?.usage?.input_tokens).toBe(request.contextTokens);
    });

    // The first request by hand: instructions, the tool's definition as JSON, one user message, each an item.
    expect(counts[0]).toBe(
      3 * ITEM_OVERHEAD_TOKENS +
        countTokens(instructions) +
        countTokens(JSON.stringify(tools[0])) +
        countTokens("What does Program.cs print?"),
    );
    // Output tokens: the call's name and arguments; the message's text.
    expect(responses[0]?.usage).toMatchObject({
      output_tokens: countTokens("read_file") + countTokens('{"path":"Program.cs"}'),
    });
    expect(responses[1]?.usage).toMatchObject({
      output_tokens: countTokens("It prints 42."),
      total_tokens: (counts[1] ?? 0) + countTokens("It prints 42."),
    });
  });

  it("keeps usage a step scripts, and counts a streamed request the same as a plain one", async () => {
    server.script(
      step.text("Scripted.", { usage: { input_tokens: 7, output_tokens: 3 } }),
      step.text("Counted."),
    );
    const scripted = await client().responses.create({ model: "gpt-5.1", input: "Hi" });
    expect(scripted.usage).toMatchObject({ input_tokens: 7, output_tokens: 3, total_tokens: 10 });

    const stream = await client().responses.create({ model: "gpt-5.1", input: "Hi", stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === "response.completed") completed = event.response;
    const [plain, streamed] = server.responseRequests();
    expect(streamed?.contextTokens).toBe(plain?.contextTokens);
    expect(completed?.usage).toMatchObject({
      input_tokens: ITEM_OVERHEAD_TOKENS + countTokens("Hi"),
      output_tokens: countTokens("Counted."),
    });
  });
});

describe("past the context window the scripted Responses API refuses as the real API does", () => {
  it("answers 400 context_length_exceeded, records the request and consumes no step; a larger window lets it through", async () => {
    const openai = client();
    server.script(
      step.functionCalls({ name: "read_file", arguments: { path: "Program.cs" }, callId: "call_1" }),
    );
    const first = await openai.responses.create({
      model: "gpt-5.1",
      instructions,
      input: "Read Program.cs",
      tools,
    });
    const window = (server.responseRequests()[0]?.contextTokens ?? 0) + 100;
    server.setContextWindow(window);
    server.enqueue(step.text("It prints 42."));
    const continuation = {
      model: "gpt-5.1",
      instructions,
      previous_response_id: first.id,
      input: [{ type: "function_call_output" as const, call_id: "call_1", output: fileText }],
      tools,
    };

    const error = await openai.responses.create(continuation).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({
      status: 400,
      code: "context_length_exceeded",
      type: "invalid_request_error",
      param: "input",
      message:
        "400 Your input exceeds the context window of this model. Please adjust your input and try again.",
    });
    const refused = server.responseRequests()[1];
    expect(refused).toMatchObject({
      contextOverflow: true,
      contextWindowTokens: window,
      consumedStep: false,
    });
    expect(refused?.contextTokens).toBe(expectedCount(refused?.body));
    expect(refused?.contextTokens).toBeGreaterThan(window);
    expect(refused?.answer).toMatchObject({
      status: 400,
      kind: "harness",
      body: {
        error: {
          message:
            "Your input exceeds the context window of this model. Please adjust your input and try again.",
          type: "invalid_request_error",
          param: "input",
          code: "context_length_exceeded",
        },
      },
    });
    expect(server.pendingSteps()).toBe(1);

    server.setContextWindow(refused?.contextTokens);
    const answered = await openai.responses.create(continuation);
    expect(answered.output_text).toBe("It prints 42.");
    expect(server.responseRequests()[2]).toMatchObject({ contextOverflow: false, consumedStep: true });
    const sent = server.responseRequests().filter((r) => !r.contextOverflow);
    expect(Math.max(...sent.map((r) => r.contextTokens ?? 0))).toBeLessThanOrEqual(
      refused?.contextTokens ?? 0,
    );
  });

  it("fails a stream the way the real API does: 200, response.created, response.in_progress, then an error event", async () => {
    server.setContextWindow(5);
    const stream = await client().responses.create({
      model: "gpt-5.1",
      input: "Too long for five tokens.",
      stream: true,
    });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of stream) seen.push(event.type);
    })().catch((e: unknown) => e);

    expect(seen).toEqual(["response.created", "response.in_progress"]);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({
      status: undefined,
      code: "context_length_exceeded",
      type: "invalid_request_error",
      param: "input",
      message: "Your input exceeds the context window of this model. Please adjust your input and try again.",
    });
    const [request] = server.responseRequests();
    expect(request).toMatchObject({ contextOverflow: true, consumedStep: false, answer: { status: 200 } });
    expect(request?.events.at(-1)).toEqual({
      type: "error",
      error: {
        type: "invalid_request_error",
        code: "context_length_exceeded",
        message:
          "Your input exceeds the context window of this model. Please adjust your input and try again.",
        param: "input",
      },
      sequence_number: 2,
    });
  });

  it("with truncation: auto drops the oldest items instead, and refuses only what no dropping can fit", async () => {
    const openai = client();
    server.script(step.text("Read it."), step.text("Short answer."));
    const first = await openai.responses.create({
      model: "gpt-5.1",
      input: `Remember this file:\n${fileText}`,
    });
    const window = countTokens(fileText);
    server.setContextWindow(window);

    const second = await openai.responses.create({
      model: "gpt-5.1",
      previous_response_id: first.id,
      input: "Summarize.",
      truncation: "auto",
    });
    const request = server.responseRequests()[1];
    expect(request?.contextTokens).toBeGreaterThan(window);
    expect(request?.contextOverflow).toBe(false);
    // The file's message went; its answer and this question stayed.
    expect(second.usage?.input_tokens).toBe(
      2 * ITEM_OVERHEAD_TOKENS + countTokens("Read it.") + countTokens("Summarize."),
    );

    const error = await openai.responses
      .create({ model: "gpt-5.1", instructions: fileText.repeat(2), input: "Hi", truncation: "auto" })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: "context_length_exceeded" });
  });
});

describe("the context window setting", () => {
  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "1000"])(
    "refuses %s with an error naming contextWindowTokens, and keeps the window it had",
    async (bad) => {
      await expect(
        startScriptedOpenAI({ contextWindowTokens: bad as number, validation: "off" }),
      ).rejects.toThrow(/contextWindowTokens must be a positive whole number/);
      server.setContextWindow(10);
      expect(() => server.setContextWindow(bad as number)).toThrow(RangeError);
      const error = await client()
        .responses.create({
          model: "gpt-5.1",
          input: "More than ten tokens are in this one sentence, surely.",
        })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400, code: "context_length_exceeded" });
    },
  );

  it("takes a window at start", async () => {
    const small = await startScriptedOpenAI({ contextWindowTokens: 3, validation: "off" });
    try {
      const error = await new OpenAI({ apiKey: "test", baseURL: small.baseUrl, maxRetries: 0 }).responses
        .create({ model: "gpt-5.1", input: "Hello there" })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400, code: "context_length_exceeded" });
      expect(small.responseRequests()[0]).toMatchObject({ contextWindowTokens: 3, contextOverflow: true });
    } finally {
      await small.close();
    }
  });
});

describe("countOpenAIContextTokens", () => {
  const call = { type: "function_call", call_id: "call_1", name: "read_file", arguments: '{"path":"a.cs"}' };
  const output = (text: string) => ({ type: "function_call_output", call_id: "call_1", output: text });

  it("is deterministic, and the count of a list is the sum of its items' counts", () => {
    const items = [{ role: "user", content: "Read a.cs" }, call, output(fileText)];
    const context = { instructions, tools, items };
    expect(countOpenAIContextTokens(context)).toBe(countOpenAIContextTokens(structuredClone(context)));
    expect(countOpenAIContextTokens(context)).toBe(
      countOpenAIContextTokens({ instructions, tools, items: [] }) +
        items.reduce((sum, item) => sum + countOpenAIContextTokens({ items: [item] }), 0),
    );
    expect(countOpenAIContextTokens({ items: [] })).toBe(0);
  });

  it("counts function calls' names and arguments and tool outputs' text", () => {
    expect(countOpenAIContextTokens({ items: [call] })).toBe(
      ITEM_OVERHEAD_TOKENS + countTokens("read_file") + countTokens('{"path":"a.cs"}'),
    );
    expect(countOpenAIContextTokens({ items: [output(fileText)] })).toBe(
      ITEM_OVERHEAD_TOKENS + countTokens(fileText),
    );
    expect(
      countOpenAIContextTokens({
        items: [
          {
            ...output(""),
            output: [
              { type: "input_text", text: fileText },
              { type: "input_image", image_url: "data:image/png;base64,AAAA" },
            ],
          },
        ],
      }),
    ).toBe(ITEM_OVERHEAD_TOKENS + countTokens(fileText) + MEDIA_PART_TOKENS);
  });

  it("counts message parts' text, and text that looks like a special token as text", () => {
    const message = {
      type: "message",
      role: "assistant",
      content: [
        { type: "output_text", text: "Done <|endoftext|>", annotations: [] },
        { type: "refusal", refusal: "No." },
      ],
    };
    expect(countOpenAIContextTokens({ items: [message] })).toBe(
      ITEM_OVERHEAD_TOKENS +
        countTokens("Done <|endoftext|>", { disallowedSpecial: new Set() }) +
        countTokens("No."),
    );
  });
});
