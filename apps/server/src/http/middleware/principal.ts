import { createHash, timingSafeEqual } from "node:crypto";
import { fail } from "@aptix/contracts";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env.js";
import { sendResult } from "../send-result.js";
import type { AuthFailure } from "./auth-failure-limit.js";

/** The principal of local mode: the one person at this machine. */
const LOCAL_PRINCIPAL = "local";

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * Resolves the caller. With API keys, `Authorization: Bearer <key>` names the principal (compared in
 * constant time); a missing or wrong key is counted by `authFailure`, which answers it. Without keys the service
 * is in local mode: one principal, whom `localModeOnly` already let in.
 */
export function principalMiddleware(
  apiKeys: ReadonlyMap<string, string>,
  authFailure: AuthFailure,
): MiddlewareHandler<AppEnv> {
  const keys = [...apiKeys].map(([key, principal]) => ({ hash: digest(key), principal }));
  return async (c, next) => {
    if (keys.length === 0) {
      c.set("principal", LOCAL_PRINCIPAL);
      return next();
    }
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const offered = match?.[1] ? digest(match[1]) : undefined;
    const principal = offered && keys.find((entry) => timingSafeEqual(entry.hash, offered))?.principal;
    if (!principal) {
      const unauthorized = fail("UNAUTHORIZED", "Send a valid API key as 'Authorization: Bearer <key>'.");
      const answer = await authFailure(c, unauthorized);
      if (answer === unauthorized) c.header("WWW-Authenticate", 'Bearer realm="aptix"');
      return sendResult(c, answer);
    }
    c.set("principal", principal);
    return next();
  };
}
