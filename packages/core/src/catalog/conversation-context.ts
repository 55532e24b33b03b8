/** The reasoning profile of a conversation (AGN-003 §2): boot prompt, model, provider, starting mode. */
export interface ConversationContext {
  id: string;
  bootPrompt: string;
  model: string;
  /** Which LlmProvider serves it: `openai`, `anthropic`, … */
  provider: string;
  /** The mode new sessions start in; `general` when absent. */
  defaultMode?: string;
  maxOutputTokens?: number;
}

export const DEFAULT_MODE_ID = "general";
