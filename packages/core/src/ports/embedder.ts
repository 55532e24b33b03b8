/** What one embeddings request answered: one vector per text, and the input tokens the provider billed. */
export interface Embedded {
  vectors: number[][];
  inputTokens: number;
}

/**
 * Turns texts into embedding vectors (docs/knowledge.md), for the vector half of workspace retrieval. An
 * adapter calls its provider's embeddings API; it may throw, and the caller reports the failure.
 */
export interface Embedder {
  /** The provider called (`openai`): with the model, it prices the usage of each request. */
  readonly id: string;
  /** One vector per text, in the order given, all made by `model`. */
  embed(input: { model: string; texts: readonly string[] }): Promise<Embedded>;
}
