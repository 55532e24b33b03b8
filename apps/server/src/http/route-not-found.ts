import { fail } from "@aptix/contracts";
import type { NotFoundHandler } from "hono";
import { METHOD_NAME_ALL } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";
import type { RouterRoute } from "hono/types";
import type { AppEnv } from "./app-env.js";
import { sendResult } from "./send-result.js";

/**
 * What answers when no route does: 405 with `Allow` when the path has routes for other methods, else 404.
 * `routes` are the app's routes once all are registered; middleware (method ALL) is no route.
 */
export function routeNotFound(routes: readonly RouterRoute[]): NotFoundHandler<AppEnv> {
  // Each route is added for every method, holding its own method: a match lists the methods the path has.
  const router = new TrieRouter<string>();
  for (const route of routes) {
    if (route.method !== METHOD_NAME_ALL) router.add(METHOD_NAME_ALL, route.path, route.method);
  }
  return (c) => {
    const methods = new Set(router.match(c.req.method, c.req.path)[0].map(([method]) => method));
    if (methods.size === 0) {
      return sendResult(c, fail("ROUTE_NOT_FOUND", `No route answers ${c.req.method} ${c.req.path}.`));
    }
    // Hono answers HEAD with the GET route.
    if (methods.has("GET")) methods.add("HEAD");
    const allow = [...methods].sort();
    c.header("Allow", allow.join(", "));
    return sendResult(
      c,
      fail(
        "METHOD_NOT_ALLOWED",
        `${c.req.path} does not answer ${c.req.method}; it answers ${allow.join(", ")}.`,
        {
          method: c.req.method,
          allow,
        },
      ),
    );
  };
}
