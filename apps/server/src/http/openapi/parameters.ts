import { z } from "@hono/zod-openapi";

/**
 * The path parameters of the routes, for the document. Any text passes: an id that breaks the rule for one is
 * answered as an unknown one (404) by the route, as today, never refused here.
 */
const pathId = (description: string, example: string) => z.string().openapi({ description, example });

const sessionId = pathId("The client's session id.", "s-42");
const turnId = pathId("The client's turn id.", "t-1");

export const SESSION_PARAMS = z.object({ sessionId });
export const TURN_PARAMS = z.object({ sessionId, turnId });
export const FILE_PARAMS = z.object({ fileId: pathId("The id in a FileRef's url.", "file_8f2c41d0") });
export const WORKSPACE_PARAMS = z.object({
  workspaceId: pathId(
    "The client's workspace id (1–256 characters); the caller's own, as its sessions are.",
    "acme-web",
  ),
});

type About = {
  description: string;
  example: string;
};

/**
 * The query parameters of `schema`, a contract's schema of a query (as strings from a URL), converted by zod as
 * the component schemas are. The route validates the query with the contract's own validator, so its refusal
 * names the parameter as every VALIDATION_FAILED does.
 */
export function queryParameters<K extends string>(
  schema: z.ZodObject<Record<K, z.ZodType>>,
  about: Record<K, About>,
) {
  const json = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }) as {
    properties: Record<K, Record<string, unknown>>;
    required?: string[];
  };
  return (Object.keys(about) as K[]).map((name) => ({
    name,
    in: "query" as const,
    required: json.required?.includes(name) ?? false,
    ...about[name],
    // JSON Schema 2020-12, which OpenAPI 3.1's schemas are; a query parameter's is a string's.
    schema: json.properties[name] as { type: "string" },
  }));
}
