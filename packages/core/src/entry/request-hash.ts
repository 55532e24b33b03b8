import type { AgentExecuteRequest } from "@aptix/contracts";
import type { ContentHashService } from "../ports/content-hash-service.js";

/** JSON with object keys sorted, so equal requests hash equally whatever order the client wrote them in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value)
      .filter(([, entry]) => entry !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * Identifies a request body for idempotency. `stream` is left out: it changes delivery, not meaning
 * (AGN-034 §4.7), so a retry that switches streaming still replays the stored answer.
 */
export function requestHash(request: AgentExecuteRequest, hashing: ContentHashService): string {
  const { stream: _delivery, ...meaning } = request as AgentExecuteRequest & { stream?: boolean };
  return hashing.hash(canonicalJson(meaning));
}
