import {
  AgentExecuteRequestSchema,
  AgentExecuteResultSchema,
  InvokeErrorSchema,
  UsageSchema,
} from "@aptix/contracts";
import { z } from "zod";

/**
 * The JSON of core's session views (`SessionSummary`, `TurnTrace` in core's pipeline/views.ts), for the
 * OpenAPI document: dates travel as ISO strings. A test holds core's types to these schemas.
 */

const timestamp = z.iso.datetime();
/** Core's internal records, shown for diagnostics: their inner shape is not part of the interface. */
const diagnostic = (description: string) => z.record(z.string(), z.unknown()).describe(description);

const turnSummaryShape = {
  turnId: z.string(),
  /** 1-based position of the turn in its session. */
  sequence: z.int().min(1),
  status: z.enum(["running", "completed", "awaiting_client_tools", "failed", "abandoned"]),
  /** The session's mode when the turn started. */
  mode: z.string(),
  usage: UsageSchema,
  error: InvokeErrorSchema.nullable(),
  createdAt: timestamp,
  completedAt: timestamp.nullable(),
};

export const TurnSummarySchema = z.strictObject(turnSummaryShape);

export const SessionSummarySchema = z.strictObject({
  sessionId: z.string(),
  conversationContextId: z.string(),
  mode: z.string(),
  modeDisplayName: z.string(),
  modeHistory: z.array(
    z.strictObject({
      turnId: z.string(),
      previousMode: z.string(),
      newMode: z.string(),
      reason: z.string(),
      changedBy: z.string(),
      changedAt: timestamp,
    }),
  ),
  turns: z.array(TurnSummarySchema),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export const TurnTraceSchema = z.strictObject({
  ...turnSummaryShape,
  /** The user turn, then each tool continuation, with the answer each got (absent while it runs). */
  rounds: z.array(
    z.strictObject({
      request: AgentExecuteRequestSchema,
      requestHash: z.string(),
      result: AgentExecuteResultSchema.optional(),
    }),
  ),
  llmCalls: z.array(
    z.strictObject({
      index: z.int().min(0),
      request: diagnostic("The provider-neutral request the Composition layer built."),
      response: diagnostic("The provider's answer, normalized by its adapter.").nullable(),
      providerRequest: z.unknown().describe("The request as sent on the provider's wire."),
      providerResponse: z.unknown().describe("The provider's raw response."),
      error: InvokeErrorSchema.nullable(),
      startedAt: timestamp,
      durationMs: z.number().min(0),
    }),
  ),
  toolExecutions: z.array(
    z.strictObject({
      toolCallId: z.string(),
      name: z.string(),
      argumentsJson: z.string(),
      resultJson: z.string().optional(),
      errorMessage: z.string().optional(),
      executionMs: z.number().min(0),
    }),
  ),
});

/** A JSON body as it travels: dates become strings. */
export type Jsonified<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Jsonified<U>[]
    : T extends object
      ? { [K in keyof T]: Jsonified<T[K]> }
      : T;
