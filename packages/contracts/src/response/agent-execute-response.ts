import { z } from "zod";
import { fail, type InvokeResult, invokeResultSchema, ok } from "../result/invoke-result.js";
import { IdentifierSchema } from "../text/identifier.js";
import { contractErrorMessages } from "../validation/error-messages.js";
import { reportFieldErrors } from "../validation/to-field-errors.js";
import { uniqueIds } from "../validation/unique-ids.js";
import { ExecutedToolResultSchema } from "./executed-tool-result.js";
import { FileRefSchema } from "./file-ref.js";
import { ToolCallSchema } from "./tool-call.js";
import { UsageSchema } from "./usage.js";
import { UserWarningSchema } from "./user-warning.js";

const sessionMetadata = {
  sessionId: IdentifierSchema,
  turnId: IdentifierSchema,
  /** Display only: clients must not branch on it (AGN-033 §3.1). */
  modeDisplayName: z.string().min(1, "must not be empty"),
};

/** A completed turn, rendered to the user (AGN-033 §3.4). Optional buckets are absent rather than empty. */
export const FinalResponseSchema = z.strictObject({
  kind: z.literal("final"),
  ...sessionMetadata,
  /** Markdown. */
  primaryOutputText: z.string(),
  files: z.array(FileRefSchema).min(1, "must be absent rather than empty").optional(),
  toolResults: z.array(ExecutedToolResultSchema).min(1, "must be absent rather than empty").optional(),
  userWarnings: z.array(UserWarningSchema).min(1, "must be absent rather than empty").optional(),
  usage: UsageSchema.optional(),
});

/** The client must run `toolCalls`, in order, and send their results back (AGN-033 §3.3). */
export const ClientToolContinuationResponseSchema = z.strictObject({
  kind: z.literal("client_tool_continuation"),
  ...sessionMetadata,
  /** An exact, ordered set (AGN-033 §3.3): the ids are unique, or results could not be matched to calls. */
  toolCalls: z
    .array(ToolCallSchema)
    .min(1, "must hold at least one tool call")
    .superRefine(uniqueIds("toolCalls", "toolCallId")),
  /** Informational only, never actionable (AGN-033 §4.2). */
  toolContinuationMessage: z.string().optional(),
});

export const AgentExecuteResponseSchema = z.discriminatedUnion("kind", [
  FinalResponseSchema,
  ClientToolContinuationResponseSchema,
]);

export type FinalResponse = z.infer<typeof FinalResponseSchema>;
export type ClientToolContinuationResponse = z.infer<typeof ClientToolContinuationResponseSchema>;
export type AgentExecuteResponse = z.infer<typeof AgentExecuteResponseSchema>;

/** What every call of `POST /v1/agent/execute` answers. */
export const AgentExecuteResultSchema = invokeResultSchema(AgentExecuteResponseSchema);

const KIND_FIELDS = {
  final: new Set(Object.keys(FinalResponseSchema.shape)),
  client_tool_continuation: new Set(Object.keys(ClientToolContinuationResponseSchema.shape)),
};

function describeUnknownResponseKey(input: unknown) {
  const kind = (input as { kind?: unknown }).kind;
  return (key: string, objectPath: readonly PropertyKey[]): string => {
    if (objectPath.length > 0) return "is not a known field here";
    for (const [other, fields] of Object.entries(KIND_FIELDS)) {
      if (other !== kind && fields.has(key)) return `must be absent when kind is ${JSON.stringify(kind)}`;
    }
    return "is not a field of AgentExecuteResponse";
  };
}

/** Checks a response against AGN-033, bucket rules included; servers call it before answering, clients after. */
export function validateAgentExecuteResponse(input: unknown): InvokeResult<AgentExecuteResponse> {
  const parsed = AgentExecuteResponseSchema.safeParse(input, { error: contractErrorMessages });
  if (parsed.success) return ok(parsed.data);
  const { fields, summary } = reportFieldErrors(
    "response",
    parsed.error.issues,
    describeUnknownResponseKey(typeof input === "object" && input !== null ? input : {}),
  );
  return fail("VALIDATION_FAILED", `Invalid response: ${summary}.`, {
    fields,
  });
}
