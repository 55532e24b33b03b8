import type { LlmProvider } from "@aptix/core";
import { AnthropicMessagesProvider } from "@aptix/llm-anthropic";
import { OpenAIResponsesProvider } from "@aptix/llm-openai";
import type { ServerEnv } from "../config/server-env.js";
import { DemoProvider } from "../demo/demo-provider.js";

/**
 * The LLM providers the server calls: each adapter's id is a provider name the catalog may use. The demo model
 * (APTIX_DEMO) comes first, beside the real ones: a config file naming them still reaches them.
 */
export function providersFromEnv(env: ServerEnv): LlmProvider[] {
  return [
    ...(env.demo ? [new DemoProvider()] : []),
    new OpenAIResponsesProvider({
      maxRetries: env.APTIX_OPENAI_MAX_RETRIES,
      timeoutMs: env.APTIX_OPENAI_TIMEOUT_MS,
    }),
    new AnthropicMessagesProvider({
      maxRetries: env.APTIX_ANTHROPIC_MAX_RETRIES,
      timeoutMs: env.APTIX_ANTHROPIC_TIMEOUT_MS,
    }),
  ];
}
