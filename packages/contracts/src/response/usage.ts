import { z } from "zod";

const tokens = z.int().min(0);

/** Token usage summed over every LLM call of the turn. */
export const UsageSchema = z.strictObject({
  inputTokens: tokens,
  outputTokens: tokens,
  totalTokens: tokens,
  /** Input tokens the provider served from its prompt cache. */
  cachedInputTokens: tokens.optional(),
  /** Output tokens the model spent on hidden reasoning. */
  reasoningTokens: tokens.optional(),
  /** How many LLM calls the turn made. */
  llmCalls: z.int().min(1).optional(),
});

export type Usage = z.infer<typeof UsageSchema>;
