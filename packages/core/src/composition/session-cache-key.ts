import { createHmac, randomBytes } from "node:crypto";
import type { SessionKey } from "../records/session-record.js";

/** A random secret when the deployment gives none: as many bytes as SHA-256's output, its full strength. */
export function newCacheKeySecret(): Uint8Array {
  return randomBytes(32);
}

/**
 * A session's prompt-cache key (`LlmRequest.cacheKey`): one per principal and session, the same on every call,
 * so a provider routes the session's calls to the cache that holds its prefix. An HMAC (SHA-256) under the
 * deployment's secret, not a plain hash: the ids are guessable, so anyone could compute a plain hash of them and
 * send calls that land on another tenant's cache. 43 characters, within OpenAI's 64.
 */
export function sessionCacheKey(session: SessionKey, secret: Uint8Array): string {
  return createHmac("sha256", secret)
    .update(JSON.stringify(["aptix-session", session.principal, session.sessionId]))
    .digest("base64url");
}
