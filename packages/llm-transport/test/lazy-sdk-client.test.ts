import { describe, expect, it } from "vitest";
import { LazySdkClient, type SdkClientOptions } from "../src/index.js";

describe("an LLM adapter's SDK client, made on first use", () => {
  function lazy(apiKey: () => string | undefined, extra: { baseURL?: string; maxRetries?: number } = {}) {
    const made: SdkClientOptions[] = [];
    const client = new LazySdkClient({
      provider: "openai",
      vendor: "OpenAI",
      keyVariable: "OPENAI_API_KEY",
      apiKey,
      ...extra,
      create: (options) => {
        made.push(options);
        return { options };
      },
    });
    return { client, made };
  }

  it("fails each call clearly while the key is missing, naming the variable, and makes no client", () => {
    const { client, made } = lazy(() => undefined);
    expect(client.get()).toEqual({
      successful: false,
      errors: [
        {
          code: "PROVIDER_ERROR",
          message: "OPENAI_API_KEY is not set: this service cannot call OpenAI.",
          details: { provider: "openai", reason: "not_configured" },
        },
      ],
      warnings: [],
    });
    expect(made).toEqual([]);
  });

  it("reads the key at the first call, makes the client once, with the SDK defaults unless given", () => {
    let key: string | undefined;
    const { client, made } = lazy(() => key, { baseURL: "http://127.0.0.1:9/v1", maxRetries: 0 });
    expect(client.get()).toMatchObject({ successful: false });
    key = "sk-test";
    const first = client.get();
    expect(client.get()).toBe(first);
    expect(made).toEqual([
      {
        apiKey: "sk-test",
        maxRetries: 0,
        timeout: 120_000,
        baseURL: "http://127.0.0.1:9/v1",
        agent: { keepAliveTimeout: 30_000, headersTimeout: 120_000 },
      },
    ]);
  });
});
