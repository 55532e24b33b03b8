import type { RetryOptions } from "./retry-options.js";

export interface AptixClientOptions {
  /** Where the service answers, e.g. `http://127.0.0.1:8787` (a path prefix is kept). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; leave it out for a local-mode server. */
  apiKey?: string;
  /** The `fetch` to call (default: the global one), e.g. one that adds a proxy or records requests. */
  fetch?: typeof fetch;
  /** How `SESSION_BUSY`, 429 and 503 answers are retried and broken streams resumed. */
  retry?: RetryOptions;
}
