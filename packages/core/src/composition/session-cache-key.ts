import { createHash } from "node:crypto";
import type { SessionKey } from "../records/session-record.js";

/**
 * A session's prompt-cache key (`LlmRequest.cacheKey`): one per principal and session, the same on every call,
 * so a provider routes the session's calls to the cache that holds its prefix. A hash, so no principal or
 * session id reaches the provider; 43 characters, within OpenAI's 64.
 */
export function sessionCacheKey(session: SessionKey): string {
  return createHash("sha256")
    .update(JSON.stringify(["aptix-session", session.principal, session.sessionId]))
    .digest("base64url");
}
