import { fail, type InvokeResult, ok } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import type { LlmProvider, LlmRequest, LlmResponse, LlmToolCall } from "../../src/index.js";
import { LlmCallStep } from "../../src/llm-call/llm-call-step.js";

const request: LlmRequest = {
  model: "gpt-test",
  continuation: { type: "none" },
  input: [{ type: "user_message", content: [{ type: "text", text: "Hi" }] }],
  tools: [],
  toolChoice: { type: "auto" },
};

function response(toolCalls: LlmToolCall[] = []): LlmResponse {
  return {
    responseId: "resp_1",
    output: toolCalls.map((call) => ({ type: "function_call", ...call })),
    text: "",
    toolCalls,
    usage: { inputTokens: 3, outputTokens: 2 },
    finishReason: toolCalls.length > 0 ? "tool_calls" : "stop",
    trace: { providerRequest: { wire: true }, providerResponse: { raw: true } },
  };
}

function providerAnswering(
  answer: () => Promise<InvokeResult<LlmResponse>>,
): LlmProvider & { seen: LlmRequest[] } {
  const seen: LlmRequest[] = [];
  return {
    id: "fake",
    storesResponses: true,
    seen,
    call(sent) {
      seen.push(sent);
      return answer();
    },
  };
}

const call = (callId: string, name = "read_file"): LlmToolCall => ({ callId, name, argumentsJson: "{}" });

describe("LlmCallStep (layer 2)", () => {
  it("sends the request unchanged and passes a successful answer through", async () => {
    const answer = ok(response([call("c1"), call("c2")]));
    const provider = providerAnswering(async () => answer);
    const result = await new LlmCallStep().run({ provider, request });
    expect(result).toBe(answer);
    expect(provider.seen).toEqual([request]);
    expect(provider.seen[0]).toBe(request);
  });

  it("passes the provider's failure through as it is", async () => {
    const failure = fail("PROVIDER_ERROR", "upstream 500", { status: 500, requestId: "req_9" });
    const result = await new LlmCallStep().run({ provider: providerAnswering(async () => failure), request });
    expect(result).toBe(failure);
  });

  it("turns an adapter that throws into PROVIDER_ERROR naming the provider", async () => {
    const provider = providerAnswering(async () => {
      throw new Error("socket hang up");
    });
    expect(await new LlmCallStep().run({ provider, request })).toEqual({
      successful: false,
      errors: [
        {
          code: "PROVIDER_ERROR",
          message: "The fake adapter failed: socket hang up",
          details: { provider: "fake" },
        },
      ],
      warnings: [],
    });
    const throwsString = providerAnswering(() => {
      throw "boom";
    });
    const result = await new LlmCallStep().run({ provider: throwsString, request });
    expect(!result.successful && result.errors[0].message).toBe("The fake adapter failed: boom");
  });

  it("refuses tool calls with duplicate ids", async () => {
    const provider = providerAnswering(async () => ok(response([call("c1"), call("c1", "lookup")])));
    expect(await new LlmCallStep().run({ provider, request })).toEqual({
      successful: false,
      errors: [
        {
          code: "PROVIDER_ERROR",
          message: "The fake response has tool calls without unique ids.",
          details: { provider: "fake" },
        },
      ],
      warnings: [],
    });
  });

  it("refuses tool calls with an empty id", async () => {
    const provider = providerAnswering(async () => ok(response([call("")])));
    const result = await new LlmCallStep().run({ provider, request });
    expect(!result.successful && result.errors[0].code).toBe("PROVIDER_ERROR");
  });

  it("hands the streaming callback to the provider", async () => {
    const deltas: string[] = [];
    const provider: LlmProvider = {
      id: "fake",
      storesResponses: true,
      async call(_sent, options) {
        options?.onTextDelta?.("Hel");
        options?.onTextDelta?.("lo");
        return ok({ ...response(), text: "Hello" });
      },
    };
    const result = await new LlmCallStep().run({
      provider,
      request,
      options: { onTextDelta: (delta) => deltas.push(delta) },
    });
    expect(result.successful && result.result.text).toBe("Hello");
    expect(deltas).toEqual(["Hel", "lo"]);
  });

  it("replaces what no store keeps (U+0000, a lone surrogate) in every string of the answer with U+FFFD", async () => {
    const bad = "a\u0000b\uD83D c\uDCC4 \u{1F4C4}";
    const good = "a\uFFFDb\uFFFD c\uFFFD \u{1F4C4}";
    const answer = {
      ...response([{ callId: "c1", name: "read_file", argumentsJson: `{"path":"${bad}"}` }]),
      text: bad,
      output: [
        { type: "reasoning" as const, provider: "fake", data: { [`k${bad}`]: [bad, 1, null] } },
        { type: "assistant_message" as const, text: bad },
      ],
      trace: { providerRequest: { wire: true }, providerResponse: { raw: bad } },
    };
    const result = await new LlmCallStep().run({
      provider: providerAnswering(async () => ok(answer)),
      request,
    });
    expect(result).toEqual(
      ok({
        ...response([{ callId: "c1", name: "read_file", argumentsJson: `{"path":"${good}"}` }]),
        text: good,
        output: [
          { type: "reasoning", provider: "fake", data: { [`k${good}`]: [good, 1, null] } },
          { type: "assistant_message", text: good },
        ],
        trace: { providerRequest: { wire: true }, providerResponse: { raw: good } },
      }),
    );
    const failed = await new LlmCallStep().run({
      provider: providerAnswering(async () => fail("PROVIDER_ERROR", `upstream said ${bad}`)),
      request,
    });
    expect(!failed.successful && failed.errors[0].message).toBe(`upstream said ${good}`);
  });

  it("repairs tool-call arguments whose JSON escapes a NUL or a lone surrogate, and leaves other JSON as it was", async () => {
    const escaped = '{"path":"a\\u0000b\\ud83d","icon":"\\ud83d\\udcc4"}';
    const clean = '{ "path": "plain" }';
    const answer = response([
      { callId: "c1", name: "read_file", argumentsJson: escaped },
      { callId: "c2", name: "read_file", argumentsJson: clean },
      { callId: "c3", name: "read_file", argumentsJson: "not JSON \\u0000" },
    ]);
    const result = await new LlmCallStep().run({
      provider: providerAnswering(async () => ok(answer)),
      request,
    });
    const repaired = '{"path":"a\uFFFDb\uFFFD","icon":"\u{1F4C4}"}';
    const expected = [repaired, clean, "not JSON \\u0000"];
    expect(result.successful && result.result.toolCalls.map((call) => call.argumentsJson)).toEqual(expected);
    expect(
      result.successful &&
        result.result.output.map((item) => (item.type === "function_call" ? item.argumentsJson : undefined)),
    ).toEqual(expected);
  });

  it("streams only storable text, and a surrogate pair split across deltas as one character", async () => {
    const sent = ["Hi\u0000", " \uD83D", "\uDCC4 and \uD83D", " then \uDCC4", "end \uD83D"];
    const deltas: string[] = [];
    const provider: LlmProvider = {
      id: "fake",
      storesResponses: true,
      async call(_sent, options) {
        for (const delta of sent) options?.onTextDelta?.(delta);
        return ok({ ...response(), text: sent.join("") });
      },
    };
    const result = await new LlmCallStep().run({
      provider,
      request,
      options: { onTextDelta: (delta) => deltas.push(delta) },
    });
    const text = "Hi\uFFFD \u{1F4C4} and \uFFFD then \uFFFDend \uFFFD";
    expect(result.successful && result.result.text).toBe(text);
    expect(deltas.join("")).toBe(text);
    expect(deltas).toEqual(["Hi\uFFFD", " ", "\u{1F4C4} and ", "\uFFFD then \uFFFD", "end ", "\uFFFD"]);
  });
});
