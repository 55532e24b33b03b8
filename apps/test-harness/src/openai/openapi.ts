/**
 * Validation of request and response bodies against the official OpenAI OpenAPI document
 * (`../shared/refdata/openai-openapi.yml`, DESIGN.md section 5).
 *
 * The document is OpenAPI 3.1 (JSON Schema 2020-12), ~3 MB of YAML. Parsing all of it with `yaml` takes
 * ~1.5 s, so the loader indexes `components.schemas` by line and parses only the schemas reachable from the
 * ones asked for (~200 of ~1400 for `CreateResponse`), falling back to a full parse if the document's layout
 * ever defeats the index. Before compiling, a deep copy of each schema is rewritten:
 * - `oneOf` → `anyOf`: the document's variants overlap (e.g. `EasyInputMessage` and the `Item` input
 *   message both accept `{ role: "user", content: [...] }`), so `oneOf` would reject valid bodies;
 * - `$recursiveRef: "#"` (a draft 2019-09 keyword, used by `CompoundFilter`) → `$ref` to its own component;
 * - OpenAPI 3.0 leftovers `nullable: true` (some remain in the document) → `type: [..., "null"]`;
 * - `#/components/schemas/X` refs → each component's own `$id`; `discriminator`, `example`, `x-*` dropped.
 * Every component is registered with one Ajv 2020-12 instance (`strict: false`) once per process.
 * Ajv decides validity; `explain.ts` turns a failure into the few errors a reader needs.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ErrorObject, ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse as parseYaml } from "yaml";
import { type Json, type JsonObject, SchemaExplainer, show } from "./explain.js";

/** Environment variable that overrides where the OpenAPI document is read from. */
export const OPENAPI_PATH_ENV = "APTIX_OPENAI_OPENAPI";

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

/** Where the OpenAPI document is read from: `APTIX_OPENAI_OPENAPI`, else `<repo root>/../shared/refdata/openai-openapi.yml`. */
export function resolveOpenApiPath(): string {
  const fromEnv = process.env[OPENAPI_PATH_ENV];
  if (fromEnv) return resolve(fromEnv);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "pnpm-workspace.yaml"))) {
      return resolve(dir, "..", "shared", "refdata", "openai-openapi.yml");
    }
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error(
        `test-harness: cannot find the repository root (a directory holding pnpm-workspace.yaml) above ${fileURLToPath(import.meta.url)}; set ${OPENAPI_PATH_ENV} to the OpenAPI document's path`,
      );
    }
    dir = parent;
  }
}

/** Reads component schemas on demand from the YAML document. */
class ComponentSchemaSource {
  private readonly lines: string[];
  private readonly index = new Map<string, [number, number]>();
  private full: Record<string, JsonObject> | undefined;

  constructor(readonly path: string) {
    if (!existsSync(path)) {
      throw new Error(
        `test-harness: OpenAI OpenAPI document not found at ${path} (set ${OPENAPI_PATH_ENV} to override)`,
      );
    }
    const text = readFileSync(path, "utf8");
    this.lines = text.split(/\r?\n/);
    this.buildIndex();
  }

  /** Line ranges of each `components.schemas.<Name>` entry (block-style YAML, 4-space names). */
  private buildIndex(): void {
    const start = this.lines.indexOf("components:");
    if (start < 0) return;
    let i = start + 1;
    for (; i < this.lines.length; i++) {
      const line = this.lines[i] ?? "";
      if (line === "  schemas:") break;
      if (/^\S/.test(line)) return;
    }
    let current: string | undefined;
    let from = 0;
    for (i += 1; i < this.lines.length; i++) {
      const line = this.lines[i] ?? "";
      if (line.length > 0 && !line.startsWith("    ") && !/^\s*#/.test(line) && line.trim() !== "") break;
      const match = /^ {4}(?:"([^"]+)"|([^\s#"][^:]*)):\s*$/.exec(line);
      if (match) {
        if (current !== undefined) this.index.set(current, [from, i]);
        current = match[1] ?? match[2];
        from = i + 1;
      }
    }
    if (current !== undefined) this.index.set(current, [from, i]);
  }

  get(name: string): JsonObject {
    if (!this.full) {
      const range = this.index.get(name);
      if (range) {
        try {
          const body = this.lines
            .slice(range[0], range[1])
            .map((l) => l.slice(6))
            .join("\n");
          const parsed: unknown = parseYaml(body);
          if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed))
            return parsed as JsonObject;
        } catch {
          // fall through to the full parse
        }
      }
      this.full = this.parseFull();
    }
    const schema = this.full[name];
    if (!schema) throw new Error(`test-harness: schema components.schemas.${name} not found in ${this.path}`);
    return schema;
  }

  private parseFull(): Record<string, JsonObject> {
    const doc = parseYaml(this.lines.join("\n")) as { components?: { schemas?: Record<string, JsonObject> } };
    return doc.components?.schemas ?? {};
  }
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
        throw new Error(`test-harness: unsupported $ref ${value} in components.schemas.${component}`);
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
  path: string;
  compileMs: number;
  validators: Map<string, ValidateFunction>;
  source: ComponentSchemaSource;
  components: Map<string, JsonObject>;
  ajv: Ajv2020;
}

let cache: { path: string; compiled: Compiled } | undefined;

/** Compiles (once per process and document path) validators for the given component schemas. */
function compiledFor(names: readonly string[]): Compiled {
  const path = resolveOpenApiPath();
  if (!cache || cache.path !== path) {
    cache = {
      path,
      compiled: {
        path,
        compileMs: 0,
        validators: new Map(),
        source: new ComponentSchemaSource(path),
        components: new Map(),
        ajv: new Ajv2020({ strict: false, allErrors: false, validateSchema: false }),
      },
    };
  }
  const compiled = cache.compiled;
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
    const refs = new Set<string>();
    const schema = rewriteSchema(compiled.source.get(name), name, refs, formats) as JsonObject;
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
    if (!validate) throw new Error(`test-harness: could not compile components.schemas.${name}`);
    compiled.validators.set(name, validate);
  }
  compiled.compileMs += performance.now() - started;
  return compiled;
}

/** Loads and compiles the `CreateResponse` validator now (it is otherwise compiled on first use). */
export function preloadOpenAISchemas(names: readonly string[] = ["CreateResponse"]): {
  path: string;
  compileMs: number;
} {
  const compiled = compiledFor(names);
  return { path: compiled.path, compileMs: compiled.compileMs };
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
