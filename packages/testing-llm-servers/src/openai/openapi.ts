/**
 * Validation of request and response bodies against the official OpenAI OpenAPI document, through the schemas
 * extracted from it into `data/openai-schemas.json` (see `extract-schemas.ts`; the extract records the
 * document's version and hash).
 *
 * The document is OpenAPI 3.1 (JSON Schema 2020-12). Before compiling, a deep copy of each schema is rewritten:
 * - `oneOf` → `anyOf`: the document's variants overlap (e.g. `EasyInputMessage` and the `Item` input
 *   message both accept `{ role: "user", content: [...] }`), so `oneOf` would reject valid bodies;
 * - `$recursiveRef: "#"` (a draft 2019-09 keyword, used by `CompoundFilter`) → `$ref` to its own component;
 * - OpenAPI 3.0 leftovers `nullable: true` (some remain in the document) → `type: [..., "null"]`;
 * - `#/components/schemas/X` refs → each component's own `$id`; `discriminator`, `example`, `x-*` dropped.
 * Every component is registered with one Ajv 2020-12 instance (`strict: false`) once per process.
 * Ajv decides validity; `explain.ts` turns a failure into the few errors a reader needs.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ErrorObject, ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { type Json, type JsonObject, SchemaExplainer, show } from "./explain.js";
import type { OpenAISchemaExtract } from "./extract-schemas.js";

/** The committed extract (two levels up from `src/openai/` and from `dist/openai/` alike). */
export const OPENAI_SCHEMAS_FILE = fileURLToPath(new URL("../../data/openai-schemas.json", import.meta.url));

const SCHEMA_BASE = "https://aptix.invalid/openai-openapi/components/schemas";
const COMPONENT_PREFIX = "#/components/schemas/";

/** One schema violation, with the failing location as a JSON pointer and as OpenAI's `param` notation. */
export interface SchemaViolation {
  /** JSON pointer into the validated value, e.g. `/input/0/content/0/type`. */
  pointer: string;
  /** The same location in OpenAI's error `param` notation, e.g. `input[0].content[0].type`. */
  param: string;
  /** Human-readable message, e.g. `'text' is not one of 'input_text', 'input_image', 'input_file'`. */
  message: string;
  /** The Ajv keyword (`enum`, `required`, `type`, …) or `unknownParameter`. */
  keyword: string;
}

export interface SchemaValidationResult {
  valid: boolean;
  /** Summarised violations (the leaves of Ajv's error tree, merged per location); empty when valid. */
  violations: SchemaViolation[];
  /** Ajv's raw errors (first failure only: Ajv runs without allErrors), for debugging. */
  rawErrors: ErrorObject[];
  /** One-line summary suitable for an OpenAI-style error `message`; empty when valid. */
  message: string;
}

/** Reads the committed extract: which document it came from and its schemas. */
export function readOpenAISchemas(): OpenAISchemaExtract {
  return JSON.parse(readFileSync(OPENAI_SCHEMAS_FILE, "utf8")) as OpenAISchemaExtract;
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Schema `$id` under which a component is registered with Ajv. */
function componentId(name: string): string {
  return `${SCHEMA_BASE}/${encodeURIComponent(name)}`;
}

/** Deep copy of a component schema, rewritten for Ajv (see the module comment); collects referenced names. */
function rewriteSchema(node: Json, component: string, refs: Set<string>, formats: Set<string>): Json {
  if (Array.isArray(node)) return node.map((n) => rewriteSchema(n, component, refs, formats));
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "discriminator" || key === "example" || key === "$recursiveAnchor" || key.startsWith("x-"))
      continue;
    if (key === "properties" && isObject(value)) {
      const props: JsonObject = {};
      for (const [prop, sub] of Object.entries(value))
        props[prop] = rewriteSchema(sub, component, refs, formats);
      out.properties = props;
    } else if (key === "enum" || key === "const" || key === "default") {
      out[key] = value;
    } else if (key === "oneOf") {
      out.anyOf = rewriteSchema(value, component, refs, formats);
    } else if (key === "$recursiveRef") {
      out.$ref = componentId(component);
    } else if (key === "$ref" && typeof value === "string") {
      if (!value.startsWith(COMPONENT_PREFIX)) {
        throw new Error(`testing-llm-servers: unsupported $ref ${value} in components.schemas.${component}`);
      }
      const name = decodeURIComponent(value.slice(COMPONENT_PREFIX.length));
      refs.add(name);
      out.$ref = componentId(name);
    } else if (key === "format" && typeof value === "string") {
      formats.add(value);
      out.format = value;
    } else {
      out[key] = rewriteSchema(value, component, refs, formats);
    }
  }
  if (out.nullable === true) {
    delete out.nullable;
    if (typeof out.type === "string") out.type = [out.type, "null"];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  }
  return out;
}

/** Formats with real checks; every other format in the document is an annotation (`double`, `unixtime`, …). */
const CHECKED_FORMATS: Record<string, (value: string) => boolean> = {
  uri: (value) => URL.canParse(value),
  date: (value) => /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value)),
};

interface Compiled {
  compileMs: number;
  validators: Map<string, ValidateFunction>;
  /** The extract's schemas as the document writes them, by component name. */
  source: Record<string, JsonObject>;
  /** The rewritten schemas registered with Ajv so far. */
  components: Map<string, JsonObject>;
  ajv: Ajv2020;
}

let cache: Compiled | undefined;

/** Compiles (once per process) validators for the given component schemas. */
function compiledFor(names: readonly string[]): Compiled {
  cache ??= {
    compileMs: 0,
    validators: new Map(),
    source: readOpenAISchemas().schemas,
    components: new Map(),
    ajv: new Ajv2020({ strict: false, allErrors: false, validateSchema: false }),
  };
  const compiled = cache;
  const missing = names.filter((n) => !compiled.validators.has(n));
  if (missing.length === 0) return compiled;

  const started = performance.now();
  // Register every component reachable from the requested ones that is not registered yet, each as its own
  // schema resource (refs were rewritten to their $ids), then compile the requested ones.
  const formats = new Set<string>();
  const stack = [...missing];
  while (stack.length > 0) {
    const name = stack.pop() as string;
    if (compiled.components.has(name)) continue;
    const original = compiled.source[name];
    if (!original) throw new Error(`testing-llm-servers: schema ${name} is not in ${OPENAI_SCHEMAS_FILE}`);
    const refs = new Set<string>();
    const schema = rewriteSchema(original, name, refs, formats) as JsonObject;
    compiled.components.set(name, schema);
    compiled.ajv.addSchema(schema, componentId(name));
    for (const ref of refs) if (!compiled.components.has(ref)) stack.push(ref);
  }
  for (const format of formats) {
    if (compiled.ajv.formats[format] !== undefined) continue;
    compiled.ajv.addFormat(format, CHECKED_FORMATS[format] ?? true);
  }
  for (const name of missing) {
    const validate = compiled.ajv.getSchema(componentId(name));
    if (!validate) throw new Error(`testing-llm-servers: could not compile components.schemas.${name}`);
    compiled.validators.set(name, validate);
  }
  compiled.compileMs += performance.now() - started;
  return compiled;
}

/** Loads and compiles the `CreateResponse` validator now (it is otherwise compiled on first use). */
export function preloadOpenAISchemas(names: readonly string[] = ["CreateResponse"]): { compileMs: number } {
  return { compileMs: compiledFor(names).compileMs };
}

function pointerToParam(pointer: string): string {
  let param = "";
  for (const raw of pointer.split("/").slice(1)) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    param += /^\d+$/.test(segment) ? `[${segment}]` : param === "" ? segment : `.${segment}`;
  }
  return param;
}

function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const raw of pointer.split("/").slice(1)) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

/** Fallback summary from Ajv's own errors (used only if the explainer finds nothing). */
function ajvSummary(errors: ErrorObject[]): SchemaViolation[] {
  const aggregate = new Set(["anyOf", "oneOf", "allOf", "if", "then", "else", "not"]);
  const relevant = errors.filter((e) => !aggregate.has(e.keyword));
  return (relevant.length > 0 ? relevant : errors).slice(0, 8).map((e) => ({
    pointer: e.instancePath,
    param: pointerToParam(e.instancePath),
    message: e.message ?? e.keyword,
    keyword: e.keyword,
  }));
}

function explainFailure(compiled: Compiled, schemaName: string, value: unknown, errors: ErrorObject[]) {
  const explainer = new SchemaExplainer((ref) =>
    ref.startsWith(`${SCHEMA_BASE}/`)
      ? compiled.components.get(decodeURIComponent(ref.slice(SCHEMA_BASE.length + 1)))
      : undefined,
  );
  const explained = explainer.explain({ $ref: componentId(schemaName) }, value);
  if (explained.length === 0) return ajvSummary(errors);
  const seen = new Set<string>();
  const violations: SchemaViolation[] = [];
  for (const e of explained) {
    const message = e.allowed
      ? `${show(valueAt(value, e.pointer))} is not one of ${e.allowed.map(show).join(", ")}`
      : e.message;
    const key = `${e.pointer}\n${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    violations.push({ pointer: e.pointer, param: pointerToParam(e.pointer), message, keyword: e.keyword });
  }
  return violations;
}

/** Top-level property names a schema declares, through `allOf` and `$ref`s. */
function declaredProperties(compiled: Compiled, schema: Json, seen = new Set<string>()): Set<string> {
  const names = new Set<string>();
  if (!isObject(schema)) return names;
  if (typeof schema.$ref === "string" && schema.$ref.startsWith(`${SCHEMA_BASE}/`)) {
    const ref = decodeURIComponent(schema.$ref.slice(SCHEMA_BASE.length + 1));
    if (!seen.has(ref)) {
      seen.add(ref);
      for (const n of declaredProperties(compiled, compiled.components.get(ref) ?? null, seen)) names.add(n);
    }
  }
  if (isObject(schema.properties)) for (const n of Object.keys(schema.properties)) names.add(n);
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf) for (const n of declaredProperties(compiled, part, seen)) names.add(n);
  }
  return names;
}

const knownTopLevel = new Map<string, Set<string>>();

/**
 * Validates `value` against `components.schemas[schemaName]` of the OpenAPI document.
 * With `rejectUnknownTopLevel`, top-level properties the schema does not declare are violations too
 * (the real API answers `Unknown parameter: '…'.`, though `CreateResponse` itself allows extra properties).
 */
export function validateOpenAISchema(
  schemaName: string,
  value: unknown,
  options: { rejectUnknownTopLevel?: boolean } = {},
): SchemaValidationResult {
  const compiled = compiledFor([schemaName]);
  const validate = compiled.validators.get(schemaName) as ValidateFunction;
  const ok = validate(value) as boolean;
  const rawErrors = ok ? [] : [...(validate.errors ?? [])];
  const violations = ok ? [] : explainFailure(compiled, schemaName, value, rawErrors);
  if (options.rejectUnknownTopLevel && isObject(value)) {
    let known = knownTopLevel.get(schemaName);
    if (!known) {
      known = declaredProperties(compiled, { $ref: componentId(schemaName) });
      knownTopLevel.set(schemaName, known);
    }
    for (const key of Object.keys(value)) {
      if (!known.has(key)) {
        violations.push({
          pointer: `/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`,
          param: key,
          message: `Unknown parameter: '${key}'.`,
          keyword: "unknownParameter",
        });
      }
    }
  }
  const shown = violations
    .slice(0, 8)
    .map((v) => (v.keyword === "unknownParameter" ? v.message : `${v.param || "(root)"}: ${v.message}`));
  if (violations.length > 8) shown.push(`… and ${violations.length - 8} more`);
  const message =
    violations.length === 0 ? "" : `Does not match the OpenAPI ${schemaName} schema: ${shown.join(" | ")}`;
  return { valid: violations.length === 0, violations, rawErrors, message };
}

/**
 * Validates a `POST /v1/responses` body against the document's `CreateResponse` schema, also rejecting
 * unknown top-level parameters as the real API does.
 */
export function validateCreateResponse(body: unknown): SchemaValidationResult {
  return validateOpenAISchema("CreateResponse", body, { rejectUnknownTopLevel: true });
}
