/** What a model costs, in USD per million tokens (docs/http-api.md). */
export interface ModelPrice {
  inputPerMTok: number;
  /** Input tokens read from the provider's prompt cache. */
  cachedInputPerMTok: number;
  /** Output tokens, reasoning included. */
  outputPerMTok: number;
}

/** Prices by model name, or by a prefix of names ending in `*` (`"claude-sonnet-4-5*"`). */
export type PriceTable = Readonly<Record<string, ModelPrice>>;
