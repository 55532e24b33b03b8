/** One line of the usage table: one model's usage on one UTC day. */
export interface UsageRow {
  day: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** Null when the price table does not price the model. */
  costUsd: number | null;
}
