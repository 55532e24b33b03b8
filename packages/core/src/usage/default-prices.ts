import type { PriceTable } from "./model-price.js";

/**
 * The built-in prices (USD per million tokens, standard tier), as the providers' pricing pages gave them on
 * 2026-11-28 (docs/configuration.md names the pages and the date: change both together). Dated model ids (`claude-sonnet-4-5-20250929`)
 * fall under their prefix. A model missing here is unpriced: its cost is null until `APTIX_CONFIG` `prices` names it.
 */
export const DEFAULT_PRICES: PriceTable = {
  "gpt-5.1*": { inputPerMTok: 1.25, cachedInputPerMTok: 0.125, outputPerMTok: 10 },
  "gpt-5*": { inputPerMTok: 1.25, cachedInputPerMTok: 0.125, outputPerMTok: 10 },
  "gpt-5-mini*": { inputPerMTok: 0.25, cachedInputPerMTok: 0.025, outputPerMTok: 2 },
  "gpt-5-nano*": { inputPerMTok: 0.05, cachedInputPerMTok: 0.005, outputPerMTok: 0.4 },
  "gpt-4.1*": { inputPerMTok: 2, cachedInputPerMTok: 0.5, outputPerMTok: 8 },
  "gpt-4.1-mini*": { inputPerMTok: 0.4, cachedInputPerMTok: 0.1, outputPerMTok: 1.6 },
  "gpt-4.1-nano*": { inputPerMTok: 0.1, cachedInputPerMTok: 0.025, outputPerMTok: 0.4 },
  "gpt-4o*": { inputPerMTok: 2.5, cachedInputPerMTok: 1.25, outputPerMTok: 10 },
  "gpt-4o-mini*": { inputPerMTok: 0.15, cachedInputPerMTok: 0.075, outputPerMTok: 0.6 },
  "o3*": { inputPerMTok: 2, cachedInputPerMTok: 0.5, outputPerMTok: 8 },
  "o4-mini*": { inputPerMTok: 1.1, cachedInputPerMTok: 0.275, outputPerMTok: 4.4 },
  // Embeddings: input alone, never cached.
  "text-embedding-3-small": { inputPerMTok: 0.02, cachedInputPerMTok: 0.02, outputPerMTok: 0 },
  "text-embedding-3-large": { inputPerMTok: 0.13, cachedInputPerMTok: 0.13, outputPerMTok: 0 },
  "text-embedding-ada-002": { inputPerMTok: 0.1, cachedInputPerMTok: 0.1, outputPerMTok: 0 },
  "claude-opus-4-8*": { inputPerMTok: 5, cachedInputPerMTok: 0.5, outputPerMTok: 25 },
  "claude-opus-4-7*": { inputPerMTok: 5, cachedInputPerMTok: 0.5, outputPerMTok: 25 },
  "claude-opus-4-6*": { inputPerMTok: 5, cachedInputPerMTok: 0.5, outputPerMTok: 25 },
  "claude-opus-4-5*": { inputPerMTok: 5, cachedInputPerMTok: 0.5, outputPerMTok: 25 },
  "claude-opus-4-1*": { inputPerMTok: 15, cachedInputPerMTok: 1.5, outputPerMTok: 75 },
  "claude-opus-4-0": { inputPerMTok: 15, cachedInputPerMTok: 1.5, outputPerMTok: 75 },
  "claude-opus-4-20250514": { inputPerMTok: 15, cachedInputPerMTok: 1.5, outputPerMTok: 75 },
  "claude-sonnet-4-6*": { inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15 },
  "claude-sonnet-4-5*": { inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15 },
  "claude-sonnet-4-0": { inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15 },
  "claude-sonnet-4-20250514": { inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15 },
  "claude-haiku-4-5*": { inputPerMTok: 1, cachedInputPerMTok: 0.1, outputPerMTok: 5 },
  "claude-3-5-haiku*": { inputPerMTok: 0.8, cachedInputPerMTok: 0.08, outputPerMTok: 4 },
};
