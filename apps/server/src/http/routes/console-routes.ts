import { readdir, readFile } from "node:fs/promises";
import { extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { fail } from "@aptix/contracts";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env.js";
import { sendResult } from "../send-result.js";

/**
 * The console's build (apps/console/dist: index.html, its hashed assets and the icon), found beside this package
 * from its sources and from its build alike. turbo builds it before the server (turbo.json); it is no dependency
 * of this package, as it depends on @aptix/client, which depends on this package for its tests.
 */
const CONSOLE_DIRECTORY = fileURLToPath(new URL("../../../../console/dist/", import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
};

/** Everything the page loads comes from this service: no CDN, no inline script, nothing of another origin. */
const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/**
 * `/console`, the web console: its files as the build left them, listed once on the first request (so no
 * request path reaches the file system), the page itself never cached and the hashed assets for good.
 */
export function consoleRoutes(app: OpenAPIHono<AppEnv>): void {
  let files: Promise<Map<string, string>> | undefined;
  const serve = async (path: string) => {
    files ??= listFiles(CONSOLE_DIRECTORY);
    const file = (await files).get(path);
    if (file === undefined) return undefined;
    const immutable = path.startsWith("assets/");
    return new Response(new Uint8Array(await readFile(file)), {
      headers: {
        "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
        "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
        ...SECURITY_HEADERS,
      },
    });
  };
  app.get("/console", async (c) => {
    const page = await serve("index.html");
    return page ?? sendResult(c, fail("ROUTE_NOT_FOUND", "The console is not built: run `pnpm build`."));
  });
  // Relative: it holds behind a proxy that serves the service under a path.
  app.get("/console/", (c) => c.redirect("../console"));
  app.get("/console/*", async (c) => {
    const page = await serve(c.req.path.slice("/console/".length));
    return page ?? sendResult(c, fail("ROUTE_NOT_FOUND", `The console has no file at ${c.req.path}.`));
  });
}

/** The build's files by their path under it (`/`-separated); none when the console was not built. */
async function listFiles(directory: string): Promise<Map<string, string>> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true }).catch(() => []);
  return new Map(
    entries
      .filter((entry) => entry.isFile())
      .map((entry) => {
        const file = join(entry.parentPath, entry.name);
        return [relative(directory, file).split(sep).join("/"), file];
      }),
  );
}
