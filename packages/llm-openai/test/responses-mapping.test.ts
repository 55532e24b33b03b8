import type { Response } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { fromResponsesOutput } from "../src/from-responses-output.js";
import { toResponsesInput } from "../src/to-responses-input.js";

// Over-HTTP behaviour (the SDK against the scripted server) is tested in llm-openai-adapter.test.ts; these pin the
// mapping rules that the wire tests cannot reach one by one.

function response(fields: Partial<Response>): Response {
  return { id: "resp_1", object: "response", status: "completed", output: [], ...fields } as Response;
}

describe("toResponsesInput", () => {
  it("keeps OpenAI reasoning items on a continuation, drops them on a replay without encrypted content", () => {
    const reasoning = {
      type: "reasoning" as const,
      provider: "openai",
      data: { id: "rs_1", type: "reasoning", summary: [], status: "completed" },
    };
    expect(toResponsesInput([reasoning], { replay: false })).toEqual([
      { id: "rs_1", type: "reasoning", summary: [] },
    ]);
    expect(toResponsesInput([reasoning], { replay: true })).toEqual([]);
    const encrypted = { ...reasoning, data: { ...reasoning.data, encrypted_content: "gAAA" } };
    expect(toResponsesInput([encrypted], { replay: true })).toEqual([
      { id: "rs_1", type: "reasoning", summary: [], encrypted_content: "gAAA" },
    ]);
  });

  it("never sends another provider's reasoning to OpenAI", () => {
    expect(
      toResponsesInput([{ type: "reasoning", provider: "anthropic", data: { thinking: "…" } }], {
        replay: false,
      }),
    ).toEqual([]);
  });

  it("sends an error output as a JSON object the model can read", () => {
    expect(
      toResponsesInput(
        [{ type: "function_call_output", callId: "c", output: "no such file", isError: true }],
        { replay: false },
      ),
    ).toEqual([{ type: "function_call_output", call_id: "c", output: '{"error":"no such file"}' }]);
  });
});

describe("fromResponsesOutput", () => {
  it("reads a refusal as text with a content_filter finish", () => {
    const result = fromResponsesOutput(
      response({
        output: [
          {
            type: "message",
            id: "m",
            role: "assistant",
            status: "completed",
            content: [{ type: "refusal", refusal: "I can't help with that." }],
          },
        ],
      }),
      {},
    );
    expect(result.successful && [result.result.text, result.result.finishReason]).toEqual([
      "I can't help with that.",
      "content_filter",
    ]);
  });

  it("turns a failed response into PROVIDER_ERROR with its code", () => {
    const result = fromResponsesOutput(
      response({ status: "failed", error: { code: "server_error", message: "overloaded" } }),
      {},
    );
    expect(!result.successful && result.errors[0]).toEqual({
      code: "PROVIDER_ERROR",
      message: "OpenAI failed the response: overloaded",
      details: { provider: "openai", code: "server_error" },
    });
    // The response's id is the provider's: it stays in the trace (docs/security.md).
    expect(!result.successful && result.trace?.providerResponse).toMatchObject({ body: { id: "resp_1" } });
  });

  it("keeps output order: reasoning, text, calls", () => {
    const result = fromResponsesOutput(
      response({
        output: [
          { type: "reasoning", id: "rs", summary: [] },
          {
            type: "message",
            id: "m",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: "Looking.", annotations: [] }],
          },
          {
            type: "function_call",
            id: "fc",
            call_id: "c1",
            name: "read_file",
            arguments: "{}",
            status: "completed",
          },
        ],
      }),
      {},
    );
    expect(result.successful && result.result.output.map((item) => item.type)).toEqual([
      "reasoning",
      "assistant_message",
      "function_call",
    ]);
    expect(result.successful && result.result.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });
});
