import type { Context } from "hono";
import type { AppEnv } from "./app-env.js";

/** The headers a proxy adds to what it forwards (RFC 7239, the de facto X-Forwarded-For, and RFC 9110's Via). */
const FORWARDING_HEADERS = ["Forwarded", "X-Forwarded-For", "Via"] as const;

/**
 * The first forwarding header the request carries, as it is spelled in docs: a request with one came through a
 * proxy, so its socket's address is the proxy's, not the caller's. Undefined for a request that came straight.
 */
export function forwardingHeader(c: Context<AppEnv>): (typeof FORWARDING_HEADERS)[number] | undefined {
  return FORWARDING_HEADERS.find((name) => c.req.header(name) !== undefined);
}
