import { z } from "zod";
import { AgentExecuteRequestSchema } from "../request/agent-execute-request.js";
import { AgentExecuteResultSchema } from "../response/agent-execute-response.js";
import { UsageSchema } from "../response/usage.js";
import { InvokeErrorSchema } from "../result/invoke-error.js";
import { SessionUsageSchema } from "../usage/usage-report.js";
import { RetrievalTraceSchema } from "./retrieval-trace.js";

/**
 * The statuses a turn takes; which event moves a turn from one to another is the lifecycle table of
 * `@aptix/core`, shown in docs/architecture.md ("Turn lifecycle").
 */
export const TURN_STATUSES = [
  // Waiting behind the session's turns before it (`multitask: "enqueue"`); runs when they have ended.
  "queued",
  "running",
  "completed",
  "awaiting_client_tools",
  "failed",
  "abandoned",
  "cancelled",
  // Kept after a rewind (or a regenerate) went back before it: out of the conversation, still shown.
  "superseded",
] as const;

/** Records of the service shown for diagnostics: their inner shape is not part of the interface. */
const diagnostic = (description: string) => z.record(z.string(), z.unknown()).describe(description);

/**
 * The session views (`GET /v1/sessions/:sessionId` and `…/turns/:turnId/trace`), built once over how a timestamp
 * is held: a `Date` in the service, an ISO 8601 string on the wire.
 */
function sessionViewSchemas<T extends z.ZodType>(timestamp: T) {
  const turnSummaryShape = {
    turnId: z.string(),
    /** 1-based position of the turn in its session. */
    sequence: z.int().min(1),
    status: z.enum(TURN_STATUSES),
    /** The session's mode when the turn started. */
    mode: z.string(),
    usage: UsageSchema,
    error: InvokeErrorSchema.nullable(),
    createdAt: timestamp,
    completedAt: timestamp.nullable(),
  };
  const turnSummary = z.strictObject(turnSummaryShape);
  return {
    turnSummary,
    sessionSummary: sessionSummarySchema(timestamp, turnSummary),
    turnTrace: z.strictObject({ ...turnSummaryShape, ...turnTraceShape(timestamp) }),
  };
}

/** What a session's owner may see of it, its turns summarized as `turnSummary`. */
function sessionSummarySchema<T extends z.ZodType, S extends z.ZodType>(timestamp: T, turnSummary: S) {
  return z.strictObject({
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
    turns: z.array(turnSummary),
    /** The usage of every LLM call of its turns, and its cost by the price table (docs/http-api.md). */
    usage: SessionUsageSchema,
    /** The input tokens the provider reported for the conversation's last call; null before any (or unknown). */
    contextTokens: z.int().min(0).nullable(),
    /** The model's context window the service keeps the conversation within (docs/context-window.md). */
    contextWindowTokens: z.int().min(1),
    /** Each compaction of the conversation, oldest first: its turn, why, and the estimates before and after. */
    compactions: z.array(
      z.strictObject({
        turnId: z.string(),
        reason: z.enum(["threshold", "overflow", "manual"]),
        tokensBefore: z.int().min(0),
        tokensAfter: z.int().min(0),
        createdAt: timestamp,
      }),
    ),
    /** A fork's source: the session, and the turn it was forked before (absent: after its last). */
    forkedFrom: z.strictObject({ sessionId: z.string(), turnId: z.string().optional() }).optional(),
    createdAt: timestamp,
    updatedAt: timestamp,
  });
}

/** What a turn's trace shows beyond its summary: its rounds, LLM calls and tool executions. */
function turnTraceShape<T extends z.ZodType>(timestamp: T) {
  return {
    /** The user turn, then each tool continuation, with the answer each got (absent while it runs). */
    rounds: z.array(
      z.strictObject({
        request: AgentExecuteRequestSchema,
        requestHash: z.string(),
        result: AgentExecuteResultSchema.optional(),
        /** A user turn's retrieval for its `[CONTEXT]` block; absent on continuations and without a retriever. */
        retrieval: RetrievalTraceSchema.optional(),
      }),
    ),
    llmCalls: z.array(
      z.strictObject({
        index: z.int().min(0),
        request: diagnostic(
          "The provider-neutral request the Composition layer built; null once the trace retention dropped it.",
        ).nullable(),
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
        /** For a tool that asks first: the user's answer, and the principal who gave it. */
        approval: z.strictObject({ approved: z.boolean(), decidedBy: z.string() }).optional(),
        resultJson: z.string().optional(),
        errorMessage: z.string().optional(),
        /** When the run started; absent on runs a service recorded before it kept the time. */
        startedAt: timestamp.optional(),
        executionMs: z.number().min(0),
      }),
    ),
    /** What the turn's LLM calls cost by the price table, in USD; null when one used a model no price names. */
    costUsd: z.number().min(0).nullable(),
  };
}

const onTheWire = sessionViewSchemas(z.iso.datetime());
const inTheService = sessionViewSchemas(z.date());

/** A turn as its session lists it; timestamps as ISO 8601 strings. */
export const TurnSummarySchema = onTheWire.turnSummary;
/** What a session's owner may see of it (`GET /v1/sessions/:sessionId`). Provider ids stay on the server. */
export const SessionSummarySchema = onTheWire.sessionSummary;
/** The out-of-band diagnostics of one turn (`GET …/turns/:turnId/trace`, AGN-027 §7, AGN-033 §3.1). */
export const TurnTraceSchema = onTheWire.turnTrace;

export type TurnStatus = (typeof TURN_STATUSES)[number];
/** The views as the service holds them: the schemas' types with `Date` timestamps. */
export type TurnSummary = z.output<typeof inTheService.turnSummary>;
export type SessionSummary = z.output<typeof inTheService.sessionSummary>;
export type TurnTrace = z.output<typeof inTheService.turnTrace>;
