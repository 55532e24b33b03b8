import { CONTINUATION_LOST } from "@aptix/core";
import OpenAI from "openai";
import type { Response } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { fromResponsesOutput } from "../src/from-responses-output.js";
import { providerError, StreamErrorEvent } from "../src/provider-error.js";

// The same failures over real HTTP are in llm-openai-adapter.test.ts; these pin which details each kind keeps.

const received = { status: 200, requestId: "req_1" };

describe("providerError", () => {
  it("keeps the status of an answer whose body could not be read, its request id in the trace only", () => {
    const failure = providerError(new SyntaxError("Unexpected end of JSON input"), received, { model: "m" });
    expect(failure.errors[0]).toEqual({
      code: "PROVIDER_ERROR",
      message: "OpenAI's answer could not be read: Unexpected end of JSON input",
      details: { provider: "openai", status: 200, reason: "malformed" },
    });
    expect(failure.trace).toEqual({
      providerRequest: { model: "m" },
      providerResponse: { status: 200, requestId: "req_1", body: null },
    });
    expect(providerError(new SyntaxError("bad")).errors[0]?.details).toEqual({
      provider: "openai",
      reason: "malformed",
    });
  });

  it("gives a stream's error event a reason of its own, with the provider's code and message", () => {
    const failure = providerError(new StreamErrorEvent("server_error", "The model crashed."), received);
    expect(failure.errors[0]).toEqual({
      code: "PROVIDER_ERROR",
      message: "OpenAI's stream reported an error: The model crashed.",
      details: {
        provider: "openai",
        reason: "stream_error",
        code: "server_error",
        message: "The model crashed.",
        status: 200,
      },
    });
  });

  it("takes the status of the answer for an API error streamed inside it, which has none of its own", () => {
    const streamed = new OpenAI.APIError(
      undefined,
      { code: "server_error", message: "boom" },
      undefined,
      new Headers(),
    );
    const failure = providerError(streamed, received);
    expect(failure.errors[0]?.details).toEqual({
      provider: "openai",
      status: 200,
      code: "server_error",
      type: null,
    });
    expect(failure.trace?.providerResponse).toMatchObject({ status: 200, requestId: "req_1" });
  });

  it("prefers an API error's own status and request id (the id in the trace), and marks a lost continuation", () => {
    const gone = OpenAI.APIError.generate(
      400,
      { error: { code: "previous_response_not_found", message: "gone" } },
      undefined,
      new Headers({ "x-request-id": "req_own" }),
    );
    const failure = providerError(gone, received);
    expect(failure.errors[0]?.details).toEqual({
      provider: "openai",
      status: 400,
      code: "previous_response_not_found",
      type: null,
      reason: CONTINUATION_LOST,
    });
    expect(failure.trace?.providerResponse).toEqual({
      status: 400,
      requestId: "req_own",
      body: { code: "previous_response_not_found", message: "gone" },
    });
  });

  it("marks a lost continuation reported by a stream's error event as the HTTP error is", () => {
    const gone = new StreamErrorEvent("previous_response_not_found", "gone");
    expect(providerError(gone, received).errors[0]?.details).toMatchObject({
      reason: CONTINUATION_LOST,
      code: "previous_response_not_found",
    });
  });
});

/** A Response OpenAI failed with `code`. */
const failedResponse = (id: string, code: string) =>
  ({
    id,
    object: "response",
    status: "failed",
    output: [],
    error: { code, message: "overloaded" },
  }) as unknown as Response;

describe("fromResponsesOutput", () => {
  it("keeps the status when the body is not a Response or the response failed; the ids go in the trace", () => {
    const notResponse = fromResponsesOutput({ hello: "world" } as unknown as Response, {}, received);
    expect(!notResponse.successful && notResponse.errors[0]?.details).toEqual({
      provider: "openai",
      reason: "malformed",
      status: 200,
    });
    const failed = fromResponsesOutput(failedResponse("resp_1", "server_error"), {}, received);
    expect(!failed.successful && failed.errors[0]?.details).toEqual({
      provider: "openai",
      code: "server_error",
      status: 200,
    });
    expect(!failed.successful && failed.trace?.providerResponse).toMatchObject({
      status: 200,
      requestId: "req_1",
      body: { id: "resp_1" },
    });
  });

  it("marks a response failed with previous_response_not_found as a lost continuation", () => {
    const lost = fromResponsesOutput(failedResponse("resp_2", "previous_response_not_found"), {}, received);
    expect(!lost.successful && lost.errors[0]?.details).toMatchObject({
      code: "previous_response_not_found",
      reason: CONTINUATION_LOST,
    });
  });
});
