import { ok } from "@aptix/contracts";
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import type { AppEnv } from "../app-env.js";
import { FAILURES, OWNER_ONLY, success } from "../openapi/responses.js";
import { sendResult } from "../send-result.js";

const count = z.int().min(0);

/**
 * What a signed-in principal may know of the service it talks to (`GET /v1/service`): its version, the kind of
 * store, the providers and conversation contexts it was configured with, the modes with their tools, and the
 * limits in force. Never a key, an address or a database URL.
 */
export const ServiceDescriptionSchema = z.strictObject({
  /** The release the service runs: the version of `@aptix/core`, as the releases tag it. */
  version: z.string(),
  /** The kind of database the service keeps its sessions in. */
  store: z.enum(["postgres", "pglite"]),
  /** The LLM providers the service can call, by id. */
  providers: z.array(z.string()),
  /**
   * The conversation contexts a chat may name (`conversationContextId`), the first the default, each with the
   * mode its sessions start in (the service changes a session's mode as it goes; a client does not set it).
   */
  conversationContexts: z.array(
    z.strictObject({ id: z.string(), provider: z.string(), model: z.string(), defaultModeId: z.string() }),
  ),
  /** The modes, with the client and server tools each offers; `defaultModeId`: the default context's first. */
  modes: z.array(z.strictObject({ id: z.string(), displayName: z.string(), tools: z.array(z.string()) })),
  defaultModeId: z.string(),
  limits: z.strictObject({
    /** The largest request body, in bytes. */
    maxBodyBytes: count,
    /** Requests a minute per principal on one instance. */
    rateLimitRpm: count,
    /** LLM calls one request may make. */
    maxLlmCallsPerRequest: count,
    /** Turns one instance runs at once. */
    maxRunningTurns: count,
    /** How long a server tool may run, in milliseconds. */
    toolTimeoutMs: count,
  }),
});

export type ServiceDescription = z.infer<typeof ServiceDescriptionSchema>;

const describeService = createRoute({
  method: "get",
  path: "/v1/service",
  operationId: "getService",
  tags: ["Service"],
  summary: "Describe the service",
  description:
    "What the service runs with, as its console's Service page shows it: version, store, providers, conversation " +
    "contexts, modes with their tools, and the limits in force. Nothing secret: no key, address or database URL.",
  security: OWNER_ONLY,
  responses: {
    200: success("ServiceDescription", "The service.", {
      version: "0.1.0",
      store: "postgres",
      providers: ["openai"],
      conversationContexts: [
        { id: "default", provider: "openai", model: "gpt-5-mini", defaultModeId: "general" },
      ],
      modes: [{ id: "general", displayName: "General", tools: ["read_file", "search_workspace"] }],
      defaultModeId: "general",
      limits: {
        maxBodyBytes: 33_554_432,
        rateLimitRpm: 600,
        maxLlmCallsPerRequest: 12,
        maxRunningTurns: 16,
        toolTimeoutMs: 30_000,
      },
    }),
    ...FAILURES,
  },
});

/** `GET /v1/service`: the description the server made of itself at start-up. */
export function serviceRoutes(app: OpenAPIHono<AppEnv>, description: ServiceDescription): void {
  app.openapi(describeService, (c) => sendResult(c, ok(description)));
}
