/**
 * The slice of the official OpenAI OpenAPI document the scripted server validates against: the component
 * schemas named as roots and every schema they reach through `$ref`, kept as the document writes them
 * (the Ajv rewrite happens when they are loaded, in `openapi.ts`). Written to `data/openai-schemas.json` by
 * `scripts/extract-openai-schemas.ts`, so tests need nothing outside the repository.
 */
import { createHash } from "node:crypto";
import type { Json, JsonObject } from "./explain.js";

/** The schemas the harness validates: request bodies, response objects and stream events. */
export const VALIDATED_SCHEMAS = ["CreateResponse", "Response", "ResponseStreamEvent"] as const;

const COMPONENT_PREFIX = "#/components/schemas/";

/** The committed extract: where it came from and the schemas, by component name. */
export interface OpenAISchemaExtract {
  source: { title: string; openapi: string; version: string; sha256: string };
  roots: string[];
  schemas: Record<string, JsonObject>;
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Component names a schema refers to (`$ref: "#/components/schemas/X"`), anywhere inside it. */
export function referencedComponents(node: Json, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) referencedComponents(item, into);
  else if (isObject(node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") {
        if (!value.startsWith(COMPONENT_PREFIX)) throw new Error(`unsupported $ref ${value}`);
        into.add(decodeURIComponent(value.slice(COMPONENT_PREFIX.length)));
      } else referencedComponents(value, into);
    }
  }
  return into;
}

/** Extracts `roots` and their `$ref` closure from a parsed OpenAPI document; `text` is its source, hashed. */
export function extractSchemas(
  document: unknown,
  text: string,
  roots: readonly string[],
): OpenAISchemaExtract {
  if (!isObject(document) || !isObject(document.info)) throw new Error("not an OpenAPI document: no info");
  const components = isObject(document.components) ? document.components.schemas : undefined;
  if (!isObject(components)) throw new Error("not an OpenAPI document: no components.schemas");
  const schemas: Record<string, JsonObject> = {};
  const pending = [...roots];
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (schemas[name]) continue;
    const schema = components[name];
    if (!isObject(schema)) throw new Error(`components.schemas.${name} not found`);
    schemas[name] = schema;
    for (const ref of referencedComponents(schema)) if (!schemas[ref]) pending.push(ref);
  }
  const sorted = Object.fromEntries(
    Object.keys(schemas)
      .sort()
      .map((n) => [n, schemas[n] as JsonObject]),
  );
  return {
    source: {
      title: String(document.info.title),
      openapi: String(document.openapi),
      version: String(document.info.version),
      sha256: createHash("sha256").update(text).digest("hex"),
    },
    roots: [...roots],
    schemas: sorted,
  };
}
