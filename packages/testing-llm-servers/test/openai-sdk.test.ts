import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ScriptedOpenAI, startScriptedOpenAI, step, validateCreateResponse } from "../src/index.js";
import { openAIReadFileTools } from "./support/read-file-tool.js";

let server: ScriptedOpenAI;

function client(options: { maxRetries?: number } = {}): OpenAI {
  return new OpenAI({ apiKey: "test", baseURL: server.baseUrl, maxRetries: options.maxRetries ?? 0 });
}

const tools = openAIReadFileTools;

beforeAll(async () => {
  server = await startScriptedOpenAI();
});

afterEach(() => {
  // Every request the SDK sent is a valid CreateResponse body, and no test left steps behind.
  for (const request of server.responseRequests()) {
    expect(validateCreateResponse(request.body).violations).toEqual([]);
    expect(request.schemaErrors).toBeUndefined();
  }
  expect(server.pendingSteps()).toBe(0);
  server.reset();
});

afterAll(async () => {
  await server.close();
});

describe("scripted Responses API driven by the openai SDK", () => {
  it("answers canned text", async () => {
    server.script(step.text("Hello from the script."));
    const response = await client().responses.create({ model: "gpt-5.1", input: "Hi" });

    expect(response.object).toBe("response");
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("Hello from the script.");
    expect(response.output[0]).toMatchObject({
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "Hello from the script.", annotations: [] }],
    });
    expect(response.model).toBe("gpt-5.1");
    expect(response.usage?.total_tokens).toBeGreaterThan(0);

    const [request] = server.requests;
    expect(request).toMatchObject({
      method: "POST",
      path: "/v1/responses",
      body: { model: "gpt-5.1", input: "Hi" },
    });
    expect(request?.headers.authorization).toBe("Bearer test");
    expect(request?.answer).toMatchObject({ status: 200, kind: "reply", responseId: response.id });
  });

  it("accepts a plain string step as a text reply", async () => {
    server.script("short form");
    const response = await client().responses.create({ model: "gpt-5.1", input: "Hi" });
    expect(response.output_text).toBe("short form");
  });

  it("returns function calls, then continues from previous_response_id with their outputs", async () => {
    server.script(
      step.reply({
        text: "Let me look.",
        functionCalls: [
          { name: "read_file", arguments: { path: "a.cs" }, callId: "call_a" },
          { name: "read_file", arguments: '{"path":"b.cs"}', callId: "call_b" },
        ],
      }),
      step.text("Both files are fine."),
    );
    const openai = client();
    const first = await openai.responses.create({ model: "gpt-5.1", input: "Check a.cs and b.cs", tools });
    const calls = first.output.filter((o) => o.type === "function_call");
    expect(first.output.map((o) => o.type)).toEqual(["message", "function_call", "function_call"]);
    expect(calls).toEqual([
      expect.objectContaining({
        call_id: "call_a",
        name: "read_file",
        arguments: '{"path":"a.cs"}',
        status: "completed",
      }),
      expect.objectContaining({
        call_id: "call_b",
        name: "read_file",
        arguments: '{"path":"b.cs"}',
        status: "completed",
      }),
    ]);
    expect(calls[0]?.id).toMatch(/^fc_/);
    expect(first.output_text).toBe("Let me look.");

    const second = await openai.responses.create({
      model: "gpt-5.1",
      previous_response_id: first.id,
      input: calls.map((c) => ({ type: "function_call_output" as const, call_id: c.call_id, output: "ok" })),
      tools,
    });
    expect(second.output_text).toBe("Both files are fine.");
    expect(second.previous_response_id).toBe(first.id);
    expect(server.transcript(second.id).map((i) => i.type ?? i.role)).toEqual([
      "user",
      "message",
      "function_call",
      "function_call",
      "function_call_output",
      "function_call_output",
      "message",
    ]);
  });

  it("rejects a continuation that lacks a function call's output, with the real API's message", async () => {
    server.script(step.functionCalls([{ name: "read_file", arguments: { path: "a.cs" }, callId: "call_1" }]));
    const openai = client();
    const first = await openai.responses.create({ model: "gpt-5.1", input: "Read a.cs", tools });

    const error = await openai.responses
      .create({ model: "gpt-5.1", previous_response_id: first.id, input: "never mind", tools })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(bad.status).toBe(400);
    expect(bad.message).toBe("400 No tool output found for function call call_1.");
    expect(bad.param).toBe("input");
    expect(bad.type).toBe("invalid_request_error");
    expect(server.requests[1]?.consumedStep).toBe(false);
  });

  it("rejects an unknown previous_response_id with previous_response_not_found", async () => {
    const error = await client()
      .responses.create({ model: "gpt-5.1", previous_response_id: "resp_nope", input: "Hi" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(bad.code).toBe("previous_response_not_found");
    expect(bad.param).toBe("previous_response_id");
    expect(bad.error).toEqual({
      message: "Previous response with id 'resp_nope' not found.",
      type: "invalid_request_error",
      param: "previous_response_id",
      code: "previous_response_not_found",
    });
  });

  it("forgets a response on demand (expiry) and never stores store:false responses", async () => {
    server.script("kept", "not kept");
    const openai = client();
    const kept = await openai.responses.create({ model: "gpt-5.1", input: "one" });
    const notKept = await openai.responses.create({ model: "gpt-5.1", input: "two", store: false });
    expect(server.storedResponseIds()).toEqual([kept.id]);
    expect(server.storedResponse(notKept.id)).toBeUndefined();

    const retrieved = await openai.responses.retrieve(kept.id);
    expect(retrieved.output_text).toBe("kept");

    expect(server.forget(kept.id)).toBe(true);
    for (const id of [kept.id, notKept.id]) {
      const error = await openai.responses
        .create({ model: "gpt-5.1", previous_response_id: id, input: "three" })
        .catch((e: unknown) => e);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("previous_response_not_found");
    }
  });

  it("answers 429 with retry-after, and the SDK retries after that long into the next step", async () => {
    server.script(step.rateLimited(1), step.text("after the wait"));
    const started = Date.now();
    const response = await client({ maxRetries: 2 }).responses.create({ model: "gpt-5.1", input: "Hi" });
    const elapsed = Date.now() - started;

    expect(response.output_text).toBe("after the wait");
    // The SDK's own backoff for a first retry is 375-500 ms; waiting ~1 s shows it read retry-after.
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(server.requests.map((r) => r.answer?.status)).toEqual([429, 200]);
    expect(server.requests.map((r) => r.headers["x-stainless-retry-count"])).toEqual(["0", "1"]);
  });

  it("surfaces a 429 as RateLimitError when retries are off", async () => {
    server.script(step.rateLimited(0, { message: "Slow down." }));
    const error = await client()
      .responses.create({ model: "gpt-5.1", input: "Hi" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers.get("retry-after")).toBe("0");
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe("rate_limit_exceeded");
  });

  it("answers a scripted 500 (InternalServerError), and the SDK recovers on retry", async () => {
    server.script(step.error(500));
    const error = await client()
      .responses.create({ model: "gpt-5.1", input: "Hi" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(500);

    server.script(step.error(500, { headers: { "retry-after-ms": "10" } }), step.text("second try"));
    const response = await client({ maxRetries: 1 }).responses.create({ model: "gpt-5.1", input: "Hi" });
    expect(response.output_text).toBe("second try");
  });

  it("answers a scripted 400 with an OpenAI-style error body", async () => {
    server.script(
      step.error(400, {
        message: "Previous response with id 'resp_x' not found.",
        param: "previous_response_id",
        code: "previous_response_not_found",
      }),
    );
    const error = await client()
      .responses.create({ model: "gpt-5.1", input: "Hi" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("previous_response_not_found");
  });

  it("sends a malformed body: the SDK throws on invalid JSON", async () => {
    server.script(step.raw());
    const error = await client()
      .responses.create({ model: "gpt-5.1", input: "Hi" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(OpenAI.APIError);
    expect(String(error)).toMatch(/JSON/);
  });

  it("sends JSON that is not a Response: the SDK does not check, it resolves with the object", async () => {
    server.script(step.raw('{"hello":"world"}'));
    const response = await client().responses.create({ model: "gpt-5.1", input: "Hi" });
    // Nothing in the SDK validates a 200 body: an adapter has to check `output` itself.
    expect(response).toMatchObject({ hello: "world" });
    expect(response.output).toBeUndefined();
    expect(response.output_text).toBeUndefined();
  });

  it("drops the connection: the SDK throws APIConnectionError", async () => {
    server.script(step.drop());
    const error = await client()
      .responses.create({ model: "gpt-5.1", input: "Hi" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(server.requests[0]?.answer).toMatchObject({ kind: "drop" });
  });

  it("waits a scripted delay before answering", async () => {
    server.script(step.text("late", { delayMs: 150 }));
    const started = Date.now();
    await client().responses.create({ model: "gpt-5.1", input: "Hi" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it("reports custom usage, reasoning items and an incomplete status", async () => {
    server.script(
      step.reply({
        reasoning: [{ summary: ["Thinking about it."] }],
        text: "Partial answ",
        status: "incomplete",
        usage: {
          input_tokens: 1200,
          output_tokens: 300,
          input_tokens_details: { cached_tokens: 1024 },
          output_tokens_details: { reasoning_tokens: 200 },
        },
      }),
    );
    const response = await client().responses.create({
      model: "gpt-5.1",
      input: "Hi",
      max_output_tokens: 300,
    });
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(response.output.map((o) => o.type)).toEqual(["reasoning", "message"]);
    expect(response.output[0]).toMatchObject({
      type: "reasoning",
      summary: [{ type: "summary_text", text: "Thinking about it." }],
    });
    expect(response.usage).toEqual({
      input_tokens: 1200,
      input_tokens_details: { cached_tokens: 1024, cache_write_tokens: 0 },
      output_tokens: 300,
      output_tokens_details: { reasoning_tokens: 200 },
      total_tokens: 1500,
    });
  });

  it("lets a step answer from the request", async () => {
    server.script((request) => {
      const body = request.body as { input: string };
      return step.text(`You said: ${body.input}`);
    });
    const response = await client().responses.create({ model: "gpt-5.1", input: "ping" });
    expect(response.output_text).toBe("You said: ping");
  });

  it("fails loudly when the script runs out", async () => {
    const error = await client({ maxRetries: 2 })
      .responses.create({ model: "gpt-5.1", input: "Hi" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    const failure = error as InstanceType<typeof OpenAI.InternalServerError>;
    expect(failure.code).toBe("script_exhausted");
    expect(failure.message).toMatch(/script ran out/);
    // x-should-retry: false stops the SDK from retrying a harness failure.
    expect(server.requests).toHaveLength(1);
  });
});

describe("streaming", () => {
  it("streams text deltas that the SDK yields in order, then the completed response", async () => {
    server.script(step.text(["Hel", "lo, ", "wor", "ld!"]));
    const stream = await client().responses.create({ model: "gpt-5.1", input: "Hi", stream: true });
    const types: string[] = [];
    const deltas: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") deltas.push(event.delta);
      if (event.type === "response.completed") completed = event.response;
    }
    expect(deltas).toEqual(["Hel", "lo, ", "wor", "ld!"]);
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(completed?.output[0]).toMatchObject({ type: "message", content: [{ text: "Hello, world!" }] });
    expect(server.requests[0]?.stream).toBe(true);
    expect(server.requests[0]?.events.map((e) => e.sequence_number)).toEqual(types.map((_, i) => i));
  });

  it("delivers the first delta before the server has sent the last one", async () => {
    server.script(step.text(["one ", "two ", "three ", "four"], { chunkDelayMs: 200 }));
    const stream = client().responses.stream({ model: "gpt-5.1", input: "Count" });
    const sentWhenFirstArrived: string[] = [];
    const received: string[] = [];
    stream.on("response.output_text.delta", (event) => {
      if (received.length === 0)
        sentWhenFirstArrived.push(...(server.requests[0]?.events.map((e) => e.type) ?? []));
      received.push(event.delta);
    });
    const final = await stream.finalResponse();

    expect(received).toEqual(["one ", "two ", "three ", "four"]);
    expect(final.output_text).toBe("one two three four");
    expect(sentWhenFirstArrived.filter((t) => t === "response.output_text.delta").length).toBeLessThan(4);
    expect(sentWhenFirstArrived).not.toContain("response.completed");
  });

  it("streams function call arguments that the SDK accumulates", async () => {
    server.script(
      step.reply({
        reasoning: [{ summary: ["Need the file."] }],
        functionCalls: [
          {
            name: "read_file",
            arguments: { path: "src/some/rather/long/path/Program.cs" },
            callId: "call_s",
          },
        ],
      }),
    );
    const stream = client().responses.stream({ model: "gpt-5.1", input: "Read it", tools });
    const argumentDeltas: string[] = [];
    stream.on("response.function_call_arguments.delta", (event) => argumentDeltas.push(event.delta));
    const final = await stream.finalResponse();

    expect(argumentDeltas.length).toBeGreaterThan(1);
    expect(argumentDeltas.join("")).toBe('{"path":"src/some/rather/long/path/Program.cs"}');
    expect(final.output.map((o) => o.type)).toEqual(["reasoning", "function_call"]);
    expect(final.output[1]).toMatchObject({
      type: "function_call",
      call_id: "call_s",
      name: "read_file",
      arguments: '{"path":"src/some/rather/long/path/Program.cs"}',
      status: "completed",
    });
    expect(final.output[0]).toMatchObject({ summary: [{ text: "Need the file." }] });
    expect(server.storedResponse(final.id)).toBeDefined();
  });

  it("ends an incomplete stream with response.incomplete", async () => {
    server.script(step.text("cut sh", { status: "incomplete" }));
    const stream = await client().responses.create({ model: "gpt-5.1", input: "Hi", stream: true });
    let last: OpenAI.Responses.ResponseStreamEvent | undefined;
    for await (const event of stream) last = event;
    expect(last?.type).toBe("response.incomplete");
  });

  it("drops a stream midway: the SDK's iteration throws", async () => {
    server.script(step.text(["a", "b", "c"], { dropAfterEvents: 5 }));
    const stream = await client().responses.create({ model: "gpt-5.1", input: "Hi", stream: true });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of stream) seen.push(event.type);
    })().catch((e: unknown) => e);
    expect(seen).toHaveLength(5);
    expect(error).toBeInstanceOf(Error);
  });
});
