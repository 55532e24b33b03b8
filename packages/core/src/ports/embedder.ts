/**
 * Turns texts into embedding vectors (docs/knowledge.md), for the vector half of workspace retrieval. An
 * adapter calls its provider's embeddings API; it may throw, and the caller reports the failure.
 */
export interface Embedder {
  /** One vector per text, in the order given, all made by `model`. */
  embed(input: { model: string; texts: readonly string[] }): Promise<number[][]>;
}
