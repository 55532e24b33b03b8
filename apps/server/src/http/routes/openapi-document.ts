import { contractJsonSchemas, ERROR_HTTP_STATUS } from "@aptix/contracts";

const SCHEMA_NAMES: Record<string, string> = {
  "agent-execute-request.schema.json": "AgentExecuteRequest",
  "agent-execute-response.schema.json": "AgentExecuteResponse",
  "invoke-result.schema.json": "InvokeResult",
};

/** OpenAPI 3.1 (whose schemas are JSON Schema 2020-12) built from the contracts' own JSON Schema. */
export function openApiDocument(): Record<string, unknown> {
  const schemas = Object.fromEntries(
    Object.entries(contractJsonSchemas()).map(([file, document]) => {
      const { $schema: _dialect, $id: _id, ...schema } = document as Record<string, unknown>;
      return [SCHEMA_NAMES[file] ?? file, schema];
    }),
  );
  const invokeResult = { $ref: "#/components/schemas/InvokeResult" };
  const answers = (description: string) => ({
    description,
    content: { "application/json": { schema: invokeResult } },
  });
  const errorStatuses = [...new Set(Object.values(ERROR_HTTP_STATUS))].sort();
  const errors = Object.fromEntries(
    errorStatuses.map((status) => [String(status), answers("A failed InvokeResult.")]),
  );
  const ownerOnly = { security: [{ apiKey: [] }] };
  const path = (name: string, description: string) => ({
    name,
    in: "path",
    required: true,
    description,
    schema: { type: "string" },
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "Aptix Agent Service",
      version: "1",
      description:
        "Runs agent turns for IDE clients. Every body is an InvokeResult; the HTTP status mirrors its first error.",
    },
    components: {
      schemas,
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
          ...ownerOnly,
          requestBody: {
            required: true,
            content: { "application/json": { schema: { $ref: "#/components/schemas/AgentExecuteRequest" } } },
          },
          responses: {
            "200": answers("The turn's AgentExecuteResponse in a successful InvokeResult."),
            ...errors,
          },
        },
      },
      "/v1/sessions/{sessionId}": {
        get: {
          summary: "Session summary: mode, mode history, turns with status.",
          ...ownerOnly,
          parameters: [path("sessionId", "The client's session id.")],
          responses: { "200": answers("The summary."), ...errors },
        },
      },
      "/v1/sessions/{sessionId}/turns/{turnId}/trace": {
        get: {
          summary: "Out-of-band diagnostics of one turn: composed provider requests, raw responses, timings.",
          ...ownerOnly,
          parameters: [
            path("sessionId", "The client's session id."),
            path("turnId", "The client's turn id."),
          ],
          responses: { "200": answers("The trace."), ...errors },
        },
      },
      "/v1/files/{fileId}": {
        get: {
          summary: "The content behind a FileRef url.",
          ...ownerOnly,
          parameters: [path("fileId", "From the FileRef url.")],
          responses: { "200": { description: "The file's bytes, with its MIME type." }, ...errors },
        },
      },
      "/healthz": { get: { summary: "Liveness.", responses: { "200": answers("Live.") } } },
      "/readyz": {
        get: {
          summary: "Readiness: database reachable, migrations applied.",
          responses: { "200": answers("Ready."), "503": answers("Not ready.") },
        },
      },
    },
  };
}
