export const formatTokens = (tokens: number | undefined) =>
  tokens === undefined ? "–" : new Intl.NumberFormat("en").format(tokens);

/** USD with enough digits for a cheap call; "unpriced" where the price table has no price. */
export const formatUsd = (costUsd: number | null) =>
  costUsd === null ? "unpriced" : `$${costUsd.toFixed(costUsd < 1 ? 4 : 2)}`;

export const formatMs = (ms: number) =>
  ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1_000).toFixed(2)} s`;

export const formatTime = (iso: string) =>
  `${new Date(iso).toLocaleString("en-GB", { timeZone: "UTC" })} UTC`;
