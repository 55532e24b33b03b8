import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/** A page that loads the client and hands it to the test as `globalThis.AptixClient`. */
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>@aptix/client in a page</title></head>
<body><script type="module">
import { AptixClient } from "/app.js";
globalThis.AptixClient = AptixClient;
</script></body></html>`;

export interface PageServer {
  /** The port on 127.0.0.1; the page's origin is whatever host name the browser reached it by. */
  port: number;
  close(): Promise<void>;
}

/** A page and the script it loads as `/app.js`, read as each request comes (a test may set them once it knows where the service is). */
export interface PageApp {
  html: string;
  script: string;
}

/**
 * Serves, on a loopback port of its own (so another origin than the service's), a page and its script: by
 * default one that loads `@aptix/client` bundled for browsers by esbuild, as a web app would ship it.
 */
export async function startPageServer(app?: PageApp): Promise<PageServer> {
  const page = app ?? { html: PAGE, script: await bundleClient() };
  const server = createServer((request, response) => {
    const path = request.url?.split("?")[0];
    const [body, type] =
      path === "/"
        ? [page.html, "text/html; charset=utf-8"]
        : path === "/app.js"
          ? [page.script, "text/javascript; charset=utf-8"]
          : [undefined, "text/plain"];
    response.writeHead(body === undefined ? 404 : 200, { "content-type": type, "cache-control": "no-store" });
    response.end(body ?? "not found");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject).listen(0, "127.0.0.1", () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** `@aptix/client` and what it imports (contracts, zod, eventsource-parser) as one ES module for browsers. */
async function bundleClient(): Promise<string> {
  const result = await build({
    stdin: {
      contents: 'export { AptixClient } from "@aptix/client";',
      resolveDir: dirname(fileURLToPath(import.meta.url)),
      loader: "js",
    },
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    // The workspace packages' TypeScript sources, as the tests use them; no build needed.
    conditions: ["@aptix/source"],
    write: false,
    logLevel: "silent",
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error("esbuild produced no bundle of @aptix/client");
  return output.text;
}
