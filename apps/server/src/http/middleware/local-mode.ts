import { fail } from "@aptix/contracts";
import type { Context, MiddlewareHandler } from "hono";
import { isLoopback } from "../../config/server-env.js";
import type { AppEnv } from "../app-env.js";
import { forwardingHeader } from "../forwarding-header.js";
import { sendResult } from "../send-result.js";

/** `name` or `name:port`, the name bracketed when it is an IPv6 address. */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::\d{1,5})?$/i;

/**
 * Local mode (no API keys) serves the person at this machine, on every route (`/metrics`, `/healthz` and the
 * API description included): any other caller is refused 403 FORBIDDEN, the message saying why. No key would
 * change that answer, so it is not 401, and it is not counted as a failed authentication (a page refused for its
 * Origin cannot lock the machine's user out).
 */
export function localModeOnly(corsOrigins: readonly string[]): MiddlewareHandler<AppEnv> {
  const allowedOrigins = new Set(corsOrigins);
  return async (c, next) => {
    const refusal = localModeRefusal(c, allowedOrigins);
    if (refusal === undefined) return next();
    return sendResult(
      c,
      fail(
        "FORBIDDEN",
        `This service runs in local mode and answers callers on this machine only: ${refusal}.`,
      ),
    );
  };
}

/**
 * Why local mode refuses this request, or undefined when it comes from this machine. The socket's address
 * keeps other machines out; a forwarding header keeps out a proxy on this machine that forwards someone else
 * (its socket is loopback too); the Host header keeps out a page whose DNS name was rebound to 127.0.0.1 (the
 * browser still names the page's host); Origin keeps out a page of another site that calls localhost itself,
 * unless the operator lets that site's pages in (`corsOrigins`, APTIX_CORS_ORIGINS).
 */
function localModeRefusal(c: Context<AppEnv>, corsOrigins: ReadonlySet<string>): string | undefined {
  const remote = c.var.clientAddress;
  if (remote !== undefined && !isLoopback(remote)) return `the request came from ${remote}`;
  const forwarded = forwardingHeader(c);
  if (forwarded !== undefined) {
    return `the request came through a proxy (its ${forwarded} header), which forwards someone else`;
  }
  // In-process requests (tests) carry no Host header; their URL's host stands in for it.
  const host = c.req.header("host") ?? new URL(c.req.url).host;
  const hostName = HOST_HEADER.exec(host)?.[1];
  if (hostName === undefined || !isLoopback(hostName.toLowerCase())) {
    return `its Host header ${JSON.stringify(host)} is not localhost, 127.x.x.x or [::1]`;
  }
  const origin = c.req.header("origin");
  if (origin !== undefined && !isLoopbackOrigin(origin) && !corsOrigins.has(origin)) {
    return `it was sent by a page of ${JSON.stringify(origin)}, neither of this machine nor of APTIX_CORS_ORIGINS`;
  }
  return undefined;
}

function isLoopbackOrigin(origin: string): boolean {
  // `null` (sandboxed pages, files) and anything that is not a URL name no machine: refused.
  if (!URL.canParse(origin)) return false;
  const url = new URL(origin);
  return (url.protocol === "http:" || url.protocol === "https:") && isLoopback(url.hostname);
}
