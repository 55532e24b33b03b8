import type { UsageSum } from "../ports/usage-store.js";
import { DEFAULT_PRICES } from "./default-prices.js";
import type { ModelPrice, PriceTable } from "./model-price.js";

/** Nano-dollars a token costs at one USD per million tokens: costs are summed in whole nano-dollars, exactly. */
const NANOS_PER_TOKEN_AT_ONE_USD_PER_MTOK = 1_000;

/**
 * The prices a server uses: the configured ones (`APTIX_CONFIG` `prices`) before the built-in table, each looked up
 * by exact model name, then by the longest `*` prefix matching it.
 */
export class PriceList {
  readonly #tables: readonly PriceTable[];

  constructor(configured: PriceTable = {}, defaults: PriceTable = DEFAULT_PRICES) {
    this.#tables = [configured, defaults];
  }

  priceOf(model: string): ModelPrice | undefined {
    for (const table of this.#tables) {
      const exact = table[model];
      if (exact !== undefined) return exact;
      let best: string | undefined;
      for (const name of Object.keys(table)) {
        if (!name.endsWith("*") || !model.startsWith(name.slice(0, -1))) continue;
        if (best === undefined || name.length > best.length) best = name;
      }
      if (best !== undefined) return table[best];
    }
    return undefined;
  }

  /**
   * What `sum` cost, in nano-dollars: uncached input, cached input and output tokens at their prices (reasoning is
   * part of output). Undefined for a model no table prices: never a guess.
   */
  costNanos(
    sum: Pick<UsageSum, "model" | "inputTokens" | "cachedInputTokens" | "outputTokens">,
  ): number | undefined {
    const price = this.priceOf(sum.model);
    if (price === undefined) return undefined;
    const uncached = Math.max(0, sum.inputTokens - sum.cachedInputTokens);
    return Math.round(
      (uncached * price.inputPerMTok +
        sum.cachedInputTokens * price.cachedInputPerMTok +
        sum.outputTokens * price.outputPerMTok) *
        NANOS_PER_TOKEN_AT_ONE_USD_PER_MTOK,
    );
  }
}
