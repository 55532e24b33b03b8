import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { gzip as zlibGzip } from "node:zlib";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import type { AppEnv } from "../app-env.js";
import { apiDocument } from "../openapi/api-document.js";

/** Where the page loads Scalar from: this service, so the reference works offline and loads nothing elsewhere. */
const SCALAR_BUNDLE_PATH = "/docs/scalar.js";

/** The document as a local-mode service answers it: no route asks for a key, so the page asks for none. */
function withoutSecurity(document: object): object {
  const {
    security: _security,
    components = {},
    paths = {},
    ...rest
  } = document as {
    security?: unknown;
    components?: { securitySchemes?: unknown };
    paths?: Record<string, Record<string, { security?: unknown }>>;
  };
  const { securitySchemes: _schemes, ...otherComponents } = components;
  const openPaths = Object.fromEntries(
    Object.entries(paths).map(([path, operations]) => [
      path,
      Object.fromEntries(
        Object.entries(operations).map(([method, { security: _operationSecurity, ...operation }]) => [
          method,
          operation,
        ]),
      ),
    ]),
  );
  return { ...rest, components: otherComponents, paths: openPaths };
}

/**
 * `/openapi.json`, generated from the app's routes on its first request (once every route is registered), and
 * `/docs`, the reference Scalar renders from it, with Scalar's browser bundle served from this service; `/` and
 * `/docs/` lead to it. In local mode the page renders the document without its key requirement, as the service
 * asks none.
 */
export function docsRoutes(app: OpenAPIHono<AppEnv>, options: { localMode: boolean }): void {
  let document: object | undefined;
  app.get("/openapi.json", (c) => {
    document ??= apiDocument(app);
    return c.json(document);
  });
  let localDocument: object | undefined;
  const page = {
    pageTitle: "Aptix Agent Service API",
    cdn: SCALAR_BUNDLE_PATH.slice(1),
    // Scalar's defaults would load fonts from its own servers and report usage.
    withDefaultFonts: false,
    telemetry: false,
    // Offline there is no Scalar cloud: no AI chat, no MCP or SDK generation, no deploy toolbar.
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: "never" as const,
  };
  app.get(
    "/docs",
    Scalar(() => {
      if (!options.localMode) return { ...page, url: "openapi.json" };
      document ??= apiDocument(app);
      localDocument ??= withoutSecurity(document);
      return { ...page, content: localDocument };
    }),
  );
  // Relative: they hold behind a proxy that serves the service under a path.
  app.get("/", (c) => c.redirect("docs"));
  app.get("/docs/", (c) => c.redirect("../docs"));
  // 5 MB (1.3 MB gzipped), read and compressed once, on the first request for it, not at start-up.
  let bundle: Promise<{ plain: Buffer; gzipped: Buffer }> | undefined;
  app.get(SCALAR_BUNDLE_PATH, async (c) => {
    bundle ??= readFile(scalarBundleFile()).then(async (plain) => ({ plain, gzipped: await gzip(plain) }));
    const { plain, gzipped } = await bundle;
    const acceptsGzip = acceptsGzipEncoding(c.req.header("accept-encoding"));
    return c.body(new Uint8Array(acceptsGzip ? gzipped : plain), 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=3600",
      vary: "Accept-Encoding",
      ...(acceptsGzip ? { "content-encoding": "gzip" } : {}),
    });
  });
}

const gzip = promisify(zlibGzip);

/** Whether `Accept-Encoding` takes gzip (RFC 9110 §12.5.3): listed, or `*`, without `q=0`. */
function acceptsGzipEncoding(header: string | undefined): boolean {
  return (header ?? "").split(",").some((entry) => {
    const [coding = "", ...parameters] = entry.split(";").map((part) => part.trim().toLowerCase());
    return (
      (coding === "gzip" || coding === "*") && !parameters.some((parameter) => /^q=0(\.0*)?$/.test(parameter))
    );
  });
}

/** The self-contained browser build of @scalar/api-reference, which its package.json's `browser` names. */
function scalarBundleFile(): string {
  const require = createRequire(import.meta.url);
  // The package exports no package.json: it is found above the entry point.
  let directory = dirname(require.resolve("@scalar/api-reference"));
  for (;;) {
    const manifestFile = join(directory, "package.json");
    if (existsSync(manifestFile)) {
      const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as { name?: string; browser?: string };
      if (manifest.name === "@scalar/api-reference" && manifest.browser)
        return join(directory, manifest.browser);
    }
    const parent = dirname(directory);
    if (parent === directory) throw new Error("@scalar/api-reference names no browser bundle");
    directory = parent;
  }
}
