import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env.js";
import { forwardedClient, ProxyList } from "./forwarded-client.js";

/**
 * Sets `c.var.clientAddress`, the address limits and logs name: the socket's, or, when the socket is one of the
 * proxies of `trustedProxies` (APTIX_TRUSTED_PROXIES), the client its `X-Forwarded-For` names (`forwardedClient`).
 * Any other caller's forwarding headers are not read: it could write them itself. Left unset for in-process
 * requests (tests), which have no socket.
 */
export function clientAddressing(trustedProxies: readonly string[]): MiddlewareHandler<AppEnv> {
  const trusted = new ProxyList(trustedProxies);
  return async (c, next) => {
    const peer = c.env?.incoming?.socket?.remoteAddress;
    if (peer !== undefined) {
      const forwardedFor = trusted.size > 0 ? c.req.header("x-forwarded-for") : undefined;
      c.set("clientAddress", forwardedClient({ peer, forwardedFor, trusted }));
    }
    return next();
  };
}
