import type {
  AgentExecuteResponse,
  DeleteWorkspaceDocumentsResponse,
  DropWorkspaceResponse,
  ModeList,
  PutWorkspaceDocumentsResponse,
  SessionCompacted,
  SessionDeleted,
  SessionListSchema,
  SessionMessagesSchema,
  SessionSummarySchema,
  TurnAccepted,
  TurnStateView,
  TurnSummarySchema,
  TurnTraceSchema,
  UsageReport,
  WorkspaceSearchResponse,
  WorkspaceSummarySchema,
} from "@aptix/contracts";
import { z } from "zod";
import type { AptixResult } from "./aptix-result.js";

/**
 * The client checks only what it relies on, and keeps everything else (loose objects): a field, an error code,
 * a warning or a turn status that a later minor version of the service adds does not make an answer unreadable.
 * The contracts' own schemas are strict (they are what the server answers with), so they are not used here.
 */
const errorSchema = z.looseObject({
  code: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});
const warningSchema = z.looseObject({ code: z.string(), message: z.string() });

const envelopeSchema = z.discriminatedUnion("successful", [
  z.looseObject({
    successful: z.literal(true),
    result: z.unknown(),
    warnings: z.array(warningSchema).optional(),
  }),
  z.looseObject({
    successful: z.literal(false),
    errors: z.array(errorSchema).min(1),
    warnings: z.array(warningSchema).optional(),
  }),
]);

const count = z.number();

const turnIds = { sessionId: z.string(), turnId: z.string(), modeDisplayName: z.string() };

const responseSchema = z.discriminatedUnion("kind", [
  z.looseObject({ kind: z.literal("final"), ...turnIds, primaryOutputText: z.string() }),
  z.looseObject({
    kind: z.literal("client_tool_continuation"),
    ...turnIds,
    toolCalls: z
      .array(z.looseObject({ toolCallId: z.string(), name: z.string(), argumentsJson: z.string() }))
      .min(1),
  }),
]);

const sessionSchema = z.looseObject({
  sessionId: z.string(),
  turns: z.array(z.looseObject({ turnId: z.string() })),
});

const sessionListSchema = z.looseObject({
  sessions: z.array(z.looseObject({ sessionId: z.string() })),
  nextCursor: z.string().optional(),
});
const messagesSchema = z.looseObject({
  messages: z.array(z.looseObject({ turnId: z.string(), role: z.string() })),
  nextCursor: z.string().optional(),
});
const deletedSchema = z.looseObject({ deleted: z.literal(true) });
const compactedSchema = z.looseObject({ compacted: z.boolean() });
const modeListSchema = z.looseObject({
  modes: z.array(z.looseObject({ id: z.string(), displayName: z.string() })),
  defaultModeId: z.string(),
});
const turnSummarySchema = z.looseObject({ turnId: z.string(), status: z.string() });

const usageTotals = z.looseObject({
  inputTokens: count,
  cachedInputTokens: count,
  outputTokens: count,
  llmCalls: count,
  costUsd: count.nullable(),
});
const usageSchema = z.looseObject({
  buckets: z.array(usageTotals.extend({ key: z.string() })),
  total: usageTotals,
  nextCursor: z.string().optional(),
});

const traceSchema = z.looseObject({ turnId: z.string(), rounds: z.array(z.unknown()) });

const turnAcceptedSchema = z.looseObject({ sessionId: z.string(), turnId: z.string(), status: z.string() });
const turnStateSchema = z.looseObject({
  turnId: z.string(),
  status: z.string(),
  result: responseSchema.optional(),
  errors: z.array(errorSchema).optional(),
});

const putDocumentsSchema = z.looseObject({
  workspaceId: z.string(),
  upserted: count,
  unchanged: count,
  deleted: count,
  chunks: count,
});
const deleteDocumentsSchema = z.looseObject({ deleted: count });
const dropSchema = z.looseObject({ workspaceId: z.string() });
const workspaceSchema = z.looseObject({ workspaceId: z.string(), documents: count, chunks: count });
const searchSchema = z.looseObject({
  chunks: z.array(
    z.looseObject({ path: z.string(), startLine: count, endLine: count, text: z.string(), score: count }),
  ),
});

/** `GET /v1/workspaces/:workspaceId` as JSON: `updatedAt` is an ISO 8601 string. */
export type WorkspaceSummaryJson = z.output<typeof WorkspaceSummarySchema>;

/** `GET /v1/sessions/:sessionId` as JSON: timestamps are ISO 8601 strings. */
export type SessionSummaryJson = z.output<typeof SessionSummarySchema>;
/** `GET /v1/sessions` as JSON: timestamps are ISO 8601 strings. */
export type SessionListJson = z.output<typeof SessionListSchema>;
/** `GET /v1/sessions/:sessionId/messages` as JSON. */
export type SessionMessagesJson = z.output<typeof SessionMessagesSchema>;
/** A turn as its session lists it, and as a cancel answers it. */
export type TurnSummaryJson = z.output<typeof TurnSummarySchema>;
/** `GET /v1/sessions/:sessionId/turns/:turnId/trace` as JSON: timestamps are ISO 8601 strings. */
export type TurnTraceJson = z.output<typeof TurnTraceSchema>;

/** A reader of one kind of answer body: the envelope, or `undefined` when the body is not one. */
export type ResultReader<T> = (body: unknown) => AptixResult<T> | undefined;

function resultReader<T>(result: z.ZodType): ResultReader<T> {
  return (body) => {
    const envelope = envelopeSchema.safeParse(body);
    if (!envelope.success) return undefined;
    const warnings = envelope.data.warnings ?? [];
    if (!envelope.data.successful) {
      const [first, ...rest] = envelope.data.errors;
      if (first === undefined) return undefined;
      return { successful: false, errors: [first, ...rest], warnings };
    }
    const parsed = result.safeParse(envelope.data.result);
    if (!parsed.success) return undefined;
    // The checked fields are what the client relies on; the rest is passed on as the server sent it.
    return { successful: true, result: envelope.data.result as T, errors: [], warnings };
  };
}

export const readExecuteResult = resultReader<AgentExecuteResponse>(responseSchema);
export const readSessionResult = resultReader<SessionSummaryJson>(sessionSchema);
export const readSessionListResult = resultReader<SessionListJson>(sessionListSchema);
export const readMessagesResult = resultReader<SessionMessagesJson>(messagesSchema);
export const readDeletedResult = resultReader<SessionDeleted>(deletedSchema);
export const readCompactedResult = resultReader<SessionCompacted>(compactedSchema);
export const readModeListResult = resultReader<ModeList>(modeListSchema);
export const readTurnSummaryResult = resultReader<TurnSummaryJson>(turnSummarySchema);
export const readTraceResult = resultReader<TurnTraceJson>(traceSchema);
export const readTurnAcceptedResult = resultReader<TurnAccepted>(turnAcceptedSchema);
export const readTurnStateResult = resultReader<TurnStateView>(turnStateSchema);
export const readUsageResult = resultReader<UsageReport>(usageSchema);
export const readPutDocumentsResult = resultReader<PutWorkspaceDocumentsResponse>(putDocumentsSchema);
export const readDeleteDocumentsResult =
  resultReader<DeleteWorkspaceDocumentsResponse>(deleteDocumentsSchema);
export const readDropWorkspaceResult = resultReader<DropWorkspaceResponse>(dropSchema);
export const readWorkspaceResult = resultReader<WorkspaceSummaryJson>(workspaceSchema);
export const readSearchResult = resultReader<WorkspaceSearchResponse>(searchSchema);
/** Any failure envelope (a file route's error answer, say); a success is not expected there. */
export const readFailureResult = resultReader<never>(z.never());
