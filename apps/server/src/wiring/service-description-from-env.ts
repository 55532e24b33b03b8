import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AgentCatalog, AgentService, LlmProvider } from "@aptix/core";
import type { ServerEnv } from "../config/server-env.js";
import type { ServiceDescription } from "../http/routes/service-routes.js";

/**
 * What `GET /v1/service` answers, made once at start-up from the environment and the catalog: only what a
 * signed-in principal may see (ids, models, limits), never a key, an address or the database URL.
 */
export function serviceDescriptionFromEnv(
  env: ServerEnv,
  parts: { catalog: AgentCatalog; service: AgentService; providers: readonly LlmProvider[] },
): ServiceDescription {
  const { catalog } = parts;
  return {
    version: releasedVersion(),
    store: /^postgres(ql)?:\/\//.test(env.DATABASE_URL) ? "postgres" : "pglite",
    providers: parts.providers.map(({ id }) => id),
    conversationContexts: catalog.conversationContexts.map((context) => ({
      id: context.id,
      provider: context.provider,
      model: context.model,
      defaultModeId: catalog.defaultModeOf(context).id,
    })),
    modes: catalog.modes.ids.map((id) => {
      const { displayName, tools } = catalog.modes.get(id);
      return { id, displayName, tools: [...tools] };
    }),
    defaultModeId: parts.service.listModes().defaultModeId,
    limits: {
      maxBodyBytes: env.APTIX_MAX_BODY_BYTES,
      rateLimitRpm: env.APTIX_RATE_LIMIT_RPM,
      maxLlmCallsPerRequest: env.APTIX_MAX_LLM_CALLS,
      maxRunningTurns: env.APTIX_MAX_RUNNING_TURNS,
      toolTimeoutMs: env.APTIX_TOOL_TIMEOUT_MS,
    },
  };
}

/**
 * The service's release: the version of `@aptix/core` it runs. The server itself is private and never versioned
 * (its package stays 0.0.0); a release versions the published packages with changesets and tags each, and the
 * server is deployed from such a checkout, so core, the service's engine, names the release it runs.
 */
function releasedVersion(): string {
  const manifest = createRequire(import.meta.url).resolve("@aptix/core/package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}
