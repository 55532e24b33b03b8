import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env.js";
import { componentSchemas } from "./component-schemas.js";
import { OWNER_ONLY } from "./responses.js";

const TAGS = [
  {
    name: "Turns",
    description: "Run agent turns: a user turn, then continuations with client tool results.",
  },
  {
    name: "Sessions",
    description: "Read, follow, cancel and delete the caller's sessions and their turns.",
  },
  {
    name: "Usage",
    description:
      "What the caller's LLM calls used and cost, by day, model or session; budgets refuse turns, further rounds and compactions past it.",
  },
  { name: "Files", description: "The files a turn's answer refers to (FileRef)." },
  {
    name: "Workspaces",
    description:
      "The caller's workspace indexes: documents pushed, searched and dropped; turns retrieve from them.",
  },
  { name: "Service", description: "Liveness and readiness, for load balancers and orchestrators." },
];

/**
 * The OpenAPI 3.1 document of `app`, generated from its routes (each defined with `createRoute`) and the
 * component schemas. Call it once every route is registered: it adds the components to the app's registry.
 */
export function apiDocument(app: OpenAPIHono<AppEnv>): object {
  for (const [name, schema] of Object.entries(componentSchemas())) {
    app.openAPIRegistry.registerComponent("schemas", name, schema);
  }
  app.openAPIRegistry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "A key of APTIX_API_KEYS. A service started without keys (local mode) needs none.",
  });
  return app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Aptix Agent Service",
      version: "1",
      description:
        "Runs agent turns for IDE clients. Every JSON body is an InvokeResult: a success carries its `result`, " +
        "a failure its `errors`, and the HTTP status mirrors the first error.",
      license: { name: "MIT", url: "https://opensource.org/license/mit" },
    },
    // Relative: the service that serves this document, wherever it is reached.
    servers: [{ url: "/", description: "This service" }],
    security: OWNER_ONLY,
    tags: TAGS,
  });
}
