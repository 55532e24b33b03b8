import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../app-env.js";

/**
 * CORS for the pages of `origins` (`APTIX_CORS_ORIGINS`): their preflights are answered, and every answer carries
 * `Access-Control-Allow-Origin` for them, failures included, so a browser client reads an error as any client
 * does. No credentials: the API key travels in `Authorization`, which the preflight allows, never in a cookie.
 */
export function corsPolicy(origins: readonly string[]): MiddlewareHandler<AppEnv> {
  return cors({
    origin: [...origins],
    allowMethods: ["GET", "HEAD", "POST", "PUT", "DELETE"],
    allowHeaders: ["Authorization", "Content-Type", "Last-Event-ID", "If-None-Match"],
    // What a client reads beyond the CORS-safelisted headers: when to retry, a file's name and tag, which request,
    // whether an answer is a replay.
    exposeHeaders: [
      "Retry-After",
      "Content-Disposition",
      "ETag",
      "X-Request-Id",
      "WWW-Authenticate",
      "Allow",
      "Idempotent-Replayed",
    ],
    maxAge: 600,
  });
}
