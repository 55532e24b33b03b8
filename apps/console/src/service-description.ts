import type { AptixResult } from "@aptix/client";

/** What `GET /v1/service` answers (docs/http-api.md): the service's version, store, providers, modes and limits. */
export interface ServiceDescription {
  version: string;
  store: "postgres" | "pglite";
  providers: string[];
  conversationContexts: { id: string; provider: string; model: string; defaultModeId: string }[];
  modes: { id: string; displayName: string; tools: string[] }[];
  defaultModeId: string;
  limits: {
    maxBodyBytes: number;
    rateLimitRpm: number;
    maxLlmCallsPerRequest: number;
    maxRunningTurns: number;
    toolTimeoutMs: number;
  };
}

/** Reads `GET /v1/service` with the connection's headers. */
export async function fetchServiceDescription(
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<AptixResult<ServiceDescription>> {
  const response = await fetch("/v1/service", { headers, signal });
  return (await response.json()) as AptixResult<ServiceDescription>;
}
