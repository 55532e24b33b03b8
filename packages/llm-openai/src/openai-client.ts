import { keepAliveFetch, LazySdkClient } from "@aptix/llm-transport";
import OpenAI from "openai";

/** How the SDK client reaches OpenAI (or a server speaking its API): the same for the provider and the embedder. */
export interface OpenAIClientOptions {
  /** Read from OPENAI_API_KEY when absent. */
  apiKey?: string;
  /** Read from OPENAI_BASE_URL when absent. */
  baseURL?: string;
  /** SDK retries of 408/409/429/5xx and connection errors, with its backoff and `retry-after`. Default 2. */
  maxRetries?: number;
  /** Per-attempt timeout. Default 120 s. */
  timeoutMs?: number;
}

/**
 * The OpenAI SDK client, made on first use, so a service without an API key still starts and each call without
 * one fails clearly; `provider` is the id its failures name. Its requests go through a keep-alive agent of its
 * own (`keepAliveFetch`).
 */
export function lazyOpenAIClient(provider: string, options: OpenAIClientOptions): LazySdkClient<OpenAI> {
  return new LazySdkClient({
    provider,
    vendor: "OpenAI",
    keyVariable: "OPENAI_API_KEY",
    apiKey: () => options.apiKey ?? process.env.OPENAI_API_KEY,
    baseURL: options.baseURL,
    maxRetries: options.maxRetries,
    timeoutMs: options.timeoutMs,
    create: ({ agent, ...sdkOptions }) => new OpenAI({ ...sdkOptions, fetch: keepAliveFetch(agent) }),
  });
}
