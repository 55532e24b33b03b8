import { z } from "zod";
import { AgentExecuteRequestSchema } from "./request/agent-execute-request.js";
import { AgentExecuteResponseSchema, AgentExecuteResultSchema } from "./response/agent-execute-response.js";

const SCHEMA_BASE_URL = "https://aptix.dev/schemas/agent/v1";

/**
 * The JSON Schema documents published beside the zod schemas (draft 2020-12, default limits), for clients
 * that do not run TypeScript. Keyed by file name under `schema/`. A few checks exist only in zod and in the
 * server: JSON text in `resultJson` / `argumentsJson`, UTF-8 byte counts, the artifacts' total size and
 * unique image and tool call ids; JSON Schema counts characters where zod counts bytes.
 */
export function contractJsonSchemas(): Record<string, object> {
  const document = (name: string, title: string, schema: z.ZodType) => ({
    $id: `${SCHEMA_BASE_URL}/${name}`,
    title,
    ...z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }),
  });
  return {
    "agent-execute-request.schema.json": document(
      "agent-execute-request.schema.json",
      "AgentExecuteRequest",
      AgentExecuteRequestSchema,
    ),
    "agent-execute-response.schema.json": document(
      "agent-execute-response.schema.json",
      "AgentExecuteResponse",
      AgentExecuteResponseSchema,
    ),
    "invoke-result.schema.json": document(
      "invoke-result.schema.json",
      "InvokeResult<AgentExecuteResponse>",
      AgentExecuteResultSchema,
    ),
  };
}
