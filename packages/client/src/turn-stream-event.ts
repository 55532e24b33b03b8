import type { AgentExecuteResponse } from "@aptix/contracts";
import type { AptixResult } from "./aptix-result.js";

/**
 * One event of a streamed turn. The text to show is the concatenation of the deltas since the last reset;
 * the stream ends with exactly one `result`, the same answer `execute` returns. `id` is the server's event id
 * (`<round>-<n>`, `<round>-result`); a `result` the server could not store has none.
 */
export type TurnStreamEvent =
  | { type: "output_text.delta"; id: string; delta: string }
  | { type: "output_text.reset"; id: string }
  /** The conversation was compacted before the round's next LLM call: its size in tokens before and after. */
  | {
      type: "context.compacted";
      id: string;
      tokensBefore: number;
      tokensAfter: number;
      reason: "threshold" | "overflow" | "manual" | (string & {});
    }
  | { type: "result"; id: string | undefined; result: AptixResult<AgentExecuteResponse> };
