import type { Hono } from "hono";
import type { AppEnv } from "../app-env.js";
import { type OpenApiOptions, openApiDocument } from "./openapi-document.js";

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"]/g,
    (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[char] ?? char,
  );

/** `/openapi.json` and a self-contained `/docs` page (no external assets: it works offline). */
export function docsRoutes(app: Hono<AppEnv>, options: OpenApiOptions): void {
  const document = openApiDocument(options);
  app.get("/openapi.json", (c) => c.json(document));
  app.get("/docs", (c) => c.html(renderDocs(document)));
}

function renderDocs(document: Record<string, unknown>): string {
  const paths = document.paths as Record<string, Record<string, { summary?: string }>>;
  const rows = Object.entries(paths)
    .flatMap(([path, operations]) =>
      Object.entries(operations).map(
        ([method, operation]) =>
          `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(operation.summary ?? "")}</td></tr>`,
      ),
    )
    .join("\n");
  const schemas = Object.entries((document.components as { schemas: Record<string, unknown> }).schemas)
    .map(
      ([name, schema]) =>
        `<h3 id="${name}">${name}</h3><pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Aptix Agent Service API</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}td,th{padding:.3rem .6rem;text-align:left;vertical-align:top}pre{background:#f4f4f4;padding:1rem;overflow:auto;max-height:30rem}</style>
</head><body>
<h1>Aptix Agent Service API</h1>
<p>Every JSON body is an InvokeResult: a success carries its <code>result</code>, a failure is an <a href="#InvokeFailure">InvokeFailure</a> and the HTTP status mirrors its first error. Machine-readable: <a href="/openapi.json">/openapi.json</a>.</p>
<h2>Routes</h2><table><tr><th>Method</th><th>Path</th><th>What</th></tr>
${rows}
</table>
<h2>Schemas</h2>
${schemas}
</body></html>`;
}
