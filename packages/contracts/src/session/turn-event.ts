import { z } from "zod";
import { AgentExecuteResultSchema } from "../response/agent-execute-response.js";

/**
 * One server-sent event of a streamed turn (`text/event-stream` of `POST /v1/agent/execute` and
 * `GET …/turns/:turnId/events`). Ids order the turn's events across its rounds: `<round>-<n>` for text deltas
 * and resets, `<round>-result` for the round's one result. The text a client shows is the deltas since the
 * last reset; at the round's end it equals the answer's text.
 */
export const TurnEventSchema = z.discriminatedUnion("event", [
  z.strictObject({
    id: z.string(),
    event: z.literal("output_text.delta"),
    data: z.strictObject({ delta: z.string() }),
  }),
  z.strictObject({ id: z.string(), event: z.literal("output_text.reset"), data: z.strictObject({}) }),
  // The conversation was compacted before the round's next LLM call (docs/context-window.md): informative, the text goes on.
  z.strictObject({
    id: z.string(),
    event: z.literal("context.compacted"),
    data: z.strictObject({
      tokensBefore: z.number().int().nonnegative(),
      tokensAfter: z.number().int().nonnegative(),
      reason: z.enum(["threshold", "overflow", "manual"]),
    }),
  }),
  z.strictObject({ id: z.string(), event: z.literal("result"), data: AgentExecuteResultSchema }),
]);

export type TurnEvent = z.output<typeof TurnEventSchema>;
