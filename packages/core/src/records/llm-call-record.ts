import type { InvokeError } from "@aptix/contracts";
import type { LlmRequest } from "./llm-request.js";
import type { LlmResponse } from "./llm-response.js";

/** One LLM call of a turn, as the composition trace keeps it (AGN-027 §7). Served out of band only. */
export interface LlmCallRecord {
  /** Unique to this call, whatever its session, turn and index: its usage is kept under it, once. */
  callId: string;
  principal: string;
  sessionId: string;
  turnId: string;
  /** 0-based position among the turn's calls. */
  index: number;
  /** The provider called (`LlmProvider.id`); absent on calls kept before it was recorded. */
  provider?: string;
  /**
   * The composed request; a replay continuation is kept as its item count, not the items again. Null once the
   * trace retention dropped it (with the raw payloads), the timings, response and usage kept.
   */
  request:
    | (Omit<LlmRequest, "continuation"> & {
        // Inline, not a named type: the stores' declaration files name this record's types through it.
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
