import { createHash, timingSafeEqual } from "node:crypto";
import { fail } from "@aptix/contracts";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env.js";
import { localModeRefusal } from "./local-mode.js";
import { sendResult } from "./send-result.js";

/** The principal of local mode: the one person at this machine. */
const LOCAL_PRINCIPAL = "local";

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * Resolves the caller. With API keys, `Authorization: Bearer <key>` names the principal (compared in
 * constant time). Without keys the service is in local mode: one principal, loopback callers only, pages of
 * other sites refused but those of `corsOrigins`.
 */
export function principalMiddleware(
  apiKeys: ReadonlyMap<string, string>,
  corsOrigins: readonly string[],
): MiddlewareHandler<AppEnv> {
  const keys = [...apiKeys].map(([key, principal]) => ({ hash: digest(key), principal }));
  const allowedOrigins = new Set(corsOrigins);
  return async (c, next) => {
    if (keys.length === 0) {
      const refusal = localModeRefusal(c, allowedOrigins);
      if (refusal !== undefined) {
        return sendResult(
          c,
          fail(
            "UNAUTHORIZED",
            `This service runs in local mode and answers loopback callers only: ${refusal}.`,
          ),
        );
      }
      c.set("principal", LOCAL_PRINCIPAL);
      return next();
    }
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const offered = match?.[1] ? digest(match[1]) : undefined;
    const principal = offered && keys.find((entry) => timingSafeEqual(entry.hash, offered))?.principal;
    if (!principal) {
      c.header("WWW-Authenticate", 'Bearer realm="aptix"');
      return sendResult(c, fail("UNAUTHORIZED", "Send a valid API key as 'Authorization: Bearer <key>'."));
    }
    c.set("principal", principal);
    return next();
  };
}
