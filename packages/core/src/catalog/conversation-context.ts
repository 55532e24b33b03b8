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
  /** The model's context window in tokens; by the model's name when absent (`contextWindowOf`). */
  contextWindowTokens?: number;
  /** The share of the window past which a call compacts the conversation first (default 0.8). */
  compactAtRatio?: number;
  /** The model that writes compaction summaries (default `model`), on the same provider. */
  compactionModel?: string;
  /** Bounds of the turn's `[CONTEXT]` block; `DEFAULT_RETRIEVAL_SETTINGS` for those not given. */
  retrieval?: Partial<RetrievalSettings>;
}

/** How much workspace context a user turn carries (docs/knowledge.md). */
export interface RetrievalSettings {
  /** The most matches a turn retrieves. */
  topK: number;
  /** The most tokens (o200k_base) the `[CONTEXT]` block may take; a chunk that would exceed it is skipped. */
  maxContextTokens: number;
}

export const DEFAULT_RETRIEVAL_SETTINGS: Readonly<RetrievalSettings> = Object.freeze({
  topK: 8,
  maxContextTokens: 4000,
});

export const DEFAULT_MODE_ID = "general";
