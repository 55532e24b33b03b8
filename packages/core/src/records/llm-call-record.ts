import type { InvokeError } from "@aptix/contracts";
import type { LlmRequest } from "./llm-request.js";
import type { LlmResponse } from "./llm-response.js";

/** One LLM call of a turn, as the composition trace keeps it (AGN-027 §7). Served out of band only. */
export interface LlmCallRecord {
  principal: string;
  sessionId: string;
  turnId: string;
  /** 0-based position among the turn's calls. */
  index: number;
  /**
   * The composed request; a replay continuation is kept as its item count, not the items again. Null once the
   * trace retention dropped it (with the raw payloads), the timings, response and usage kept.
   */
  request:
    | (Omit<LlmRequest, "continuation"> & {
        // Spelled out, not named: packages that infer types from this one (the store's schema) must be able to
        // write them in their declarations without importing from core's internals.
        continuation:
          | { type: "none" }
          | { type: "previous_response"; responseId: string }
          | { type: "replay"; itemCount: number };
      })
    | null;
  response: Omit<LlmResponse, "trace"> | null;
  providerRequest: unknown;
  providerResponse: unknown;
  error: InvokeError | null;
  startedAt: Date;
  durationMs: number;
}
