/** The providers start-up wires when it is given none: what a catalog may name unless told otherwise. */
export const DEFAULT_PROVIDER_IDS: readonly string[] = ["openai", "anthropic"];
