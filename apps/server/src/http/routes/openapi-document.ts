import {
  AgentExecuteRequestSchema,
  AgentExecuteResponseSchema,
  AgentExecuteResultSchema,
  DEFAULT_REQUEST_LIMITS,
  DeleteWorkspaceDocumentsRequestSchema,
  DeleteWorkspaceDocumentsResponseSchema,
  DropWorkspaceResponseSchema,
  ERROR_HTTP_STATUS,
  type ErrorCode,
  InvokeErrorSchema,
  InvokeWarningSchema,
  invokeResultSchema,
  PutWorkspaceDocumentsRequestSchema,
  PutWorkspaceDocumentsResponseSchema,
  SessionDeletedSchema,
  SessionListSchema,
  SessionMessagesSchema,
  WORKSPACE_LIMITS,
  WorkspaceSearchRequestSchema,
  WorkspaceSearchResponseSchema,
  WorkspaceSummarySchema,
} from "@aptix/contracts";
import { z } from "zod";
import { RETRY_AFTER_SECONDS } from "../send-result.js";
import { SessionSummarySchema, TurnSummarySchema, TurnTraceSchema } from "../session-view-schemas.js";
import { ServiceStatusSchema } from "./health-routes.js";

/** The successful InvokeResult carrying `result` (a 200 never carries errors). */
const successOf = (result: z.ZodType) => invokeResultSchema(result).options[0];

/** Every schema the document names, by component name; one registered inside another becomes a `$ref`. */
function componentSchemas(): Record<string, unknown> {
  const registry = z.registry<{ id: string; title?: string }>();
  registry.add(AgentExecuteRequestSchema, { id: "AgentExecuteRequest" });
  registry.add(AgentExecuteResponseSchema, { id: "AgentExecuteResponse" });
  registry.add(AgentExecuteResultSchema, {
    id: "AgentExecuteResult",
    title: "InvokeResult<AgentExecuteResponse>",
  });
  registry.add(successOf(AgentExecuteResponseSchema), { id: "AgentExecuteSuccess" });
  registry.add(InvokeErrorSchema, { id: "InvokeError" });
  registry.add(InvokeWarningSchema, { id: "InvokeWarning" });
  // The failure of every route: no `result`, at least one error.
  registry.add(invokeResultSchema(z.never()).options[1], { id: "InvokeFailure" });
  registry.add(SessionSummarySchema, { id: "SessionSummary" });
  registry.add(successOf(SessionSummarySchema), { id: "SessionSummarySuccess" });
  registry.add(TurnSummarySchema, { id: "TurnSummary" });
  registry.add(successOf(TurnSummarySchema), { id: "TurnSummarySuccess" });
  registry.add(successOf(SessionListSchema), { id: "SessionListSuccess" });
  registry.add(successOf(SessionMessagesSchema), { id: "SessionMessagesSuccess" });
  registry.add(successOf(SessionDeletedSchema), { id: "SessionDeletedSuccess" });
  registry.add(TurnTraceSchema, { id: "TurnTrace" });
  registry.add(successOf(TurnTraceSchema), { id: "TurnTraceSuccess" });
  const workspaceSchemas = {
    PutWorkspaceDocumentsRequest: PutWorkspaceDocumentsRequestSchema,
    DeleteWorkspaceDocumentsRequest: DeleteWorkspaceDocumentsRequestSchema,
    WorkspaceSearchRequest: WorkspaceSearchRequestSchema,
  };
  for (const [id, schema] of Object.entries(workspaceSchemas)) registry.add(schema, { id });
  const workspaceAnswers = {
    PutWorkspaceDocuments: PutWorkspaceDocumentsResponseSchema,
    DeleteWorkspaceDocuments: DeleteWorkspaceDocumentsResponseSchema,
    WorkspaceSummary: WorkspaceSummarySchema,
    DropWorkspace: DropWorkspaceResponseSchema,
    WorkspaceSearch: WorkspaceSearchResponseSchema,
  };
  for (const [id, schema] of Object.entries(workspaceAnswers)) {
    registry.add(schema, { id });
    registry.add(successOf(schema), { id: `${id}Success` });
  }
  registry.add(ServiceStatusSchema, { id: "ServiceStatus" });
  registry.add(successOf(ServiceStatusSchema), { id: "ServiceStatusSuccess" });
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

export interface OpenApiOptions {
  /** The server's request body limit (APTIX_MAX_BODY_BYTES). */
  maxBodyBytes: number;
}

/** OpenAPI 3.1 (whose schemas are JSON Schema 2020-12) built from the zod schemas the bodies come from. */
export function openApiDocument({ maxBodyBytes }: OpenApiOptions): Record<string, unknown> {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const json = (description: string, schema: string) => ({
    description,
    content: { "application/json": { schema: ref(schema) } },
  });
  const eventStream = {
    schema: { type: "string" },
    description:
      'Server-sent events, each with an `id:`: `event: output_text.delta` with `{"delta":"…"}` as text arrives, ' +
      "`event: output_text.reset` with `{}` when the text shown so far is dropped (an intermediate LLM call's, " +
      "or an interrupted attempt's), then exactly one `event: result` whose data is an AgentExecuteResult. " +
      "The deltas since the last reset add up to the result's `primaryOutputText` (or `toolContinuationMessage`); " +
      "a mode change's welcome is streamed as a delta.",
  };
  // The `Retry-After` header of a status whose codes carry one (RETRY_AFTER_SECONDS), in seconds; a limit's
  // 429 says its own wait.
  const retryAfter = (status: number) => {
    const codes = Object.entries(RETRY_AFTER_SECONDS).filter(
      ([code]) => ERROR_HTTP_STATUS[code as ErrorCode] === status,
    );
    const told =
      status === ERROR_HTTP_STATUS.RATE_LIMITED ? ["`details.retryAfterSeconds` with RATE_LIMITED"] : [];
    if (codes.length + told.length === 0) return {};
    const waits = [...codes.map(([code, seconds]) => `${seconds} s with ${code}`), ...told].join(", ");
    return {
      headers: {
        "Retry-After": {
          description: `Seconds to wait before sending the same request again: ${waits}.`,
          schema: { type: "integer", minimum: 0 },
        },
      },
    };
  };
  const errorStatuses = [...new Set(Object.values(ERROR_HTTP_STATUS))].sort();
  const errors = Object.fromEntries(
    errorStatuses.map((status) => [
      String(status),
      {
        ...json("A failed InvokeResult; the status mirrors its first error.", "InvokeFailure"),
        ...retryAfter(status),
      },
    ]),
  );
  const ownerOnly = { security: [{ apiKey: [] }] };
  const path = (name: string, description: string) => ({
    name,
    in: "path",
    required: true,
    description,
    schema: { type: "string" },
  });
  const sessionId = path("sessionId", "The client's session id.");
  const workspaceId = path(
    "workspaceId",
    "The client's workspace id (1–256 characters); the caller's own, as its sessions are.",
  );
  const jsonBody = (schema: string) => ({
    required: true,
    content: { "application/json": { schema: ref(schema) } },
  });
  const workspaceRoute = (
    summary: string,
    body: string | undefined,
    answer: string,
    description: string,
  ) => ({
    summary,
    ...ownerOnly,
    parameters: [workspaceId],
    ...(body ? { requestBody: jsonBody(body) } : {}),
    responses: { "200": json(description, `${answer}Success`), ...errors },
  });
  const turnId = path("turnId", "The client's turn id.");
  const query = (name: string, description: string) => ({
    name,
    in: "query",
    required: false,
    description,
    schema: { type: "string" },
  });
  const limit = query("limit", "1–100, default 20.");
  const cursor = query("cursor", "The previous page's nextCursor.");
  return {
    openapi: "3.1.0",
    info: {
      title: "Aptix Agent Service",
      version: "1",
      description:
        "Runs agent turns for IDE clients. Every JSON body is an InvokeResult; the HTTP status mirrors its first error.",
    },
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        apiKey: {
          type: "http",
          scheme: "bearer",
          description: "A key of APTIX_API_KEYS (not needed in local mode).",
        },
      },
    },
    paths: {
      "/v1/agent/execute": {
        post: {
          summary: "Run a user turn or apply a tool continuation (AGN-034), answered as AGN-033.",
          description:
            `A body over ${maxBodyBytes} bytes (\`x-aptix-max-body-bytes\`) is refused with 413 PAYLOAD_TOO_LARGE ` +
            "before it is read as JSON. The request schema carries the size limits that JSON Schema can state; " +
            "`x-aptix-request-limits` holds all of them, as `createAgentExecuteRequestValidator` of " +
            "@aptix/contracts takes them (UTF-8 bytes of artifacts, their total, decoded image bytes…).",
          ...ownerOnly,
          requestBody: {
            required: true,
            "x-aptix-max-body-bytes": maxBodyBytes,
            "x-aptix-request-limits": DEFAULT_REQUEST_LIMITS,
            content: { "application/json": { schema: ref("AgentExecuteRequest") } },
          },
          responses: {
            "200": {
              description:
                "The turn's AgentExecuteResponse; as server-sent events when the turn asked to stream.",
              content: {
                "application/json": { schema: ref("AgentExecuteSuccess") },
                "text/event-stream": eventStream,
              },
            },
            ...errors,
          },
        },
      },
      "/v1/sessions": {
        get: {
          summary: "The caller's sessions, most recently active first, a page at a time.",
          ...ownerOnly,
          parameters: [
            limit,
            cursor,
            query("workspaceId", "Only sessions whose latest workspace is this one."),
          ],
          responses: { "200": json("A page of sessions.", "SessionListSuccess"), ...errors },
        },
      },
      "/v1/sessions/{sessionId}": {
        get: {
          summary: "Session summary: mode, mode history, turns with status.",
          ...ownerOnly,
          parameters: [sessionId],
          responses: { "200": json("The summary.", "SessionSummarySuccess"), ...errors },
        },
        delete: {
          summary: "Deletes the session and everything of it; 409 SESSION_BUSY while a turn runs.",
          ...ownerOnly,
          parameters: [sessionId],
          responses: { "200": json("Deleted.", "SessionDeletedSuccess"), ...errors },
        },
      },
      "/v1/sessions/{sessionId}/messages": {
        get: {
          summary:
            "The conversation as a UI shows it, oldest first: a user and an assistant message per turn.",
          ...ownerOnly,
          parameters: [sessionId, limit, cursor],
          responses: { "200": json("A page of messages.", "SessionMessagesSuccess"), ...errors },
        },
      },
      "/v1/sessions/{sessionId}/turns/{turnId}/cancel": {
        post: {
          summary:
            "Cancels a running or awaiting turn on whichever instance runs it; a turn that ended answers as it is.",
          ...ownerOnly,
          parameters: [sessionId, turnId],
          responses: { "200": json("The turn's summary.", "TurnSummarySuccess"), ...errors },
        },
      },
      "/v1/sessions/{sessionId}/turns/{turnId}/trace": {
        get: {
          summary: "Out-of-band diagnostics of one turn: composed provider requests, raw responses, timings.",
          ...ownerOnly,
          parameters: [sessionId, turnId],
          responses: { "200": json("The trace.", "TurnTraceSuccess"), ...errors },
        },
      },
      "/v1/sessions/{sessionId}/turns/{turnId}/events": {
        get: {
          summary: "The turn's events again after Last-Event-ID, then live until the turn ends.",
          description:
            "Event ids are `<round>-<n>` for text deltas and `<round>-result` for a round's result (round 0 is the " +
            "user turn, then one round per tool continuation). A resume always ends with the turn's latest `result` " +
            "event: after that result itself (Last-Event-ID `<last round>-result`), it is sent again, as the " +
            "authoritative end. An id that names no event of the turn (not of this form, a round the turn does not " +
            "have, or the result of a round still running) is 400 VALIDATION_FAILED naming `Last-Event-ID`. A text " +
            "delta's id is judged by its round: the deltas of a turn that ended are pruned after a while.",
          ...ownerOnly,
          parameters: [
            sessionId,
            turnId,
            {
              name: "Last-Event-ID",
              in: "header",
              required: false,
              description: "The id of the last event received; absent to start from the first.",
              schema: { type: "string" },
            },
            {
              name: "lastEventId",
              in: "query",
              required: false,
              description: "Last-Event-ID for clients that cannot set headers (EventSource polyfills).",
              schema: { type: "string" },
            },
          ],
          responses: {
            "200": { description: "The events.", content: { "text/event-stream": eventStream } },
            ...errors,
          },
        },
      },
      "/v1/files/{fileId}": {
        get: {
          summary: "The content behind a FileRef url; 410 FILE_EXPIRED once its contentExpires has passed.",
          ...ownerOnly,
          parameters: [path("fileId", "From the FileRef url.")],
          responses: {
            "200": {
              description: "The file's bytes, as an attachment, with the file's MIME type.",
              headers: {
                ETag: { description: "The file's content hash.", schema: { type: "string" } },
                "Content-Disposition": {
                  description:
                    "`attachment`, with `filename` (ASCII) and `filename*` for a name that is not ASCII.",
                  schema: { type: "string" },
                },
                "X-Content-Type-Options": { schema: { type: "string", const: "nosniff" } },
              },
              content: {
                "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } },
              },
            },
            "304": {
              description: "Not modified: `If-None-Match` names the file's ETag (its content never changes).",
              headers: { ETag: { description: "The file's content hash.", schema: { type: "string" } } },
            },
            ...errors,
          },
        },
      },
      "/v1/workspaces/{workspaceId}/documents": {
        put: {
          ...workspaceRoute(
            "Push documents into the workspace's index (created when missing).",
            "PutWorkspaceDocumentsRequest",
            "PutWorkspaceDocuments",
            "What the push did and the workspace's chunk total.",
          ),
          description:
            "Upserts by path: a document whose content is unchanged is not chunked or embedded again; `replace: true` " +
            `also deletes the workspace's documents not in the set. At most ${WORKSPACE_LIMITS.maxDocumentBytes} bytes ` +
            `(UTF-8) a document and ${WORKSPACE_LIMITS.maxDocumentsPerRequest} documents a request; paths follow the ` +
            "artifact path rules. Bad input is 400 VALIDATION_FAILED naming the field, and changes nothing.",
        },
        delete: workspaceRoute(
          "Delete documents by path.",
          "DeleteWorkspaceDocumentsRequest",
          "DeleteWorkspaceDocuments",
          "How many documents were deleted.",
        ),
      },
      "/v1/workspaces/{workspaceId}": {
        get: workspaceRoute(
          "The workspace's document and chunk counts.",
          undefined,
          "WorkspaceSummary",
          "The summary.",
        ),
        delete: workspaceRoute(
          "Drop the workspace and its whole index.",
          undefined,
          "DropWorkspace",
          "Dropped.",
        ),
      },
      "/v1/workspaces/{workspaceId}/search": {
        post: {
          ...workspaceRoute(
            "Search the workspace: ranked chunks, best first.",
            "WorkspaceSearchRequest",
            "WorkspaceSearch",
            "The chunks found.",
          ),
          description:
            "Lexical ranking over code-aware terms, fused with vector similarity when the server embeds chunks. " +
            "`ragScope` filters as a user turn's does (AGN-034 §4.4). An unknown workspace, or another " +
            "principal's, is 404 WORKSPACE_NOT_FOUND.",
        },
      },
      "/healthz": {
        get: {
          summary: "Liveness.",
          responses: { "200": json("Live.", "ServiceStatusSuccess") },
        },
      },
      "/readyz": {
        get: {
          summary:
            "Readiness: database reachable and migrated, MCP servers connected; read from a status a background " +
            "check refreshes. A 503 names what is down, never an address.",
          responses: {
            "200": json("Ready.", "ServiceStatusSuccess"),
            "503": { ...json("Not ready, and why.", "InvokeFailure"), ...retryAfter(503) },
          },
        },
      },
    },
  };
}
