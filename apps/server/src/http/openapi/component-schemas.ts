import {
  AgentExecuteRequestSchema,
  AgentExecuteResponseSchema,
  AgentExecuteResultSchema,
  DeleteWorkspaceDocumentsRequestSchema,
  DeleteWorkspaceDocumentsResponseSchema,
  DropWorkspaceResponseSchema,
  InvokeErrorSchema,
  InvokeWarningSchema,
  invokeResultSchema,
  ModeListSchema,
  PutWorkspaceDocumentsRequestSchema,
  PutWorkspaceDocumentsResponseSchema,
  SessionCompactedSchema,
  SessionDeletedSchema,
  SessionForkRequestSchema,
  SessionListSchema,
  SessionMessagesSchema,
  SessionRewindRequestSchema,
  TurnAcceptedSchema,
  TurnRegenerateRequestSchema,
  TurnStateViewSchema,
  UsageReportSchema,
  WorkspaceSearchRequestSchema,
  WorkspaceSearchResponseSchema,
  WorkspaceSummarySchema,
} from "@aptix/contracts";
import { z } from "zod";
import { ServiceStatusSchema } from "../routes/health-routes.js";
import { ServiceDescriptionSchema } from "../routes/service-routes.js";
import { SessionSummarySchema, TurnSummarySchema, TurnTraceSchema } from "./session-view-schemas.js";

/** The successful InvokeResult carrying `result` (a 200 never carries errors). */
const successOf = (result: z.ZodType) => invokeResultSchema(result).options[0];

/**
 * The answers the routes give, by component name; each also has `<name>Success`, the InvokeResult carrying it.
 * The routes' responses refer to them by these names.
 */
const ANSWERS = {
  AgentExecuteResponse: AgentExecuteResponseSchema,
  SessionSummary: SessionSummarySchema,
  TurnSummary: TurnSummarySchema,
  TurnTrace: TurnTraceSchema,
  TurnAccepted: TurnAcceptedSchema,
  TurnState: TurnStateViewSchema,
  SessionList: SessionListSchema,
  SessionMessages: SessionMessagesSchema,
  SessionCompacted: SessionCompactedSchema,
  SessionDeleted: SessionDeletedSchema,
  ModeList: ModeListSchema,
  UsageReport: UsageReportSchema,
  PutWorkspaceDocuments: PutWorkspaceDocumentsResponseSchema,
  DeleteWorkspaceDocuments: DeleteWorkspaceDocumentsResponseSchema,
  WorkspaceSummary: WorkspaceSummarySchema,
  DropWorkspace: DropWorkspaceResponseSchema,
  WorkspaceSearch: WorkspaceSearchResponseSchema,
  ServiceStatus: ServiceStatusSchema,
  ServiceDescription: ServiceDescriptionSchema,
} as const;

/** The name of an answer's component, as the routes refer to it. */
export type AnswerName = keyof typeof ANSWERS;

/**
 * Every schema the document names, by component name, converted by zod itself (as @aptix/contracts converts its
 * published JSON Schema): OpenAPI 3.1's schemas are JSON Schema 2020-12. A schema registered here that another
 * holds becomes a `$ref`. The request bodies are converted as input, as a client sends them.
 */
export function componentSchemas(): Record<string, Record<string, unknown>> {
  const registry = z.registry<{ id: string; title?: string }>();
  registry.add(AgentExecuteRequestSchema, { id: "AgentExecuteRequest" });
  registry.add(AgentExecuteResultSchema, {
    id: "AgentExecuteResult",
    title: "InvokeResult<AgentExecuteResponse>",
  });
  registry.add(InvokeErrorSchema, { id: "InvokeError" });
  registry.add(InvokeWarningSchema, { id: "InvokeWarning" });
  // The failure of every route: no `result`, at least one error.
  registry.add(invokeResultSchema(z.never()).options[1], { id: "InvokeFailure" });
  registry.add(PutWorkspaceDocumentsRequestSchema, { id: "PutWorkspaceDocumentsRequest" });
  registry.add(DeleteWorkspaceDocumentsRequestSchema, { id: "DeleteWorkspaceDocumentsRequest" });
  registry.add(WorkspaceSearchRequestSchema, { id: "WorkspaceSearchRequest" });
  registry.add(SessionRewindRequestSchema, { id: "SessionRewindRequest" });
  registry.add(SessionForkRequestSchema, { id: "SessionForkRequest" });
  registry.add(TurnRegenerateRequestSchema, { id: "TurnRegenerateRequest" });
  for (const [id, schema] of Object.entries(ANSWERS)) {
    registry.add(schema, { id });
    registry.add(successOf(schema), { id: `${id}Success` });
  }
  const { schemas } = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    io: "input",
    uri: (id) => `#/components/schemas/${id}`,
  });
  // OpenAPI 3.1 sets the dialect for the whole document, and components are named by their key.
  return Object.fromEntries(
    Object.entries(schemas).map(([name, { $schema: _dialect, $id: _id, ...schema }]) => [name, schema]),
  );
}
