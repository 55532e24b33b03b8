import type { ToolDefinition } from "../records/tool-definition.js";

/**
 * Tool schemas: strict to send, lenient to read (docs/security.md). OpenAI's strict mode wants every property required
 * and the optional ones nullable, so `null` is how a strict model says "not given"; a model without strict mode
 * (Claude, a scripted one) leaves the property out instead. Both mean the same, so neither fails a call.
 */

type Schema = Record<string, unknown>;

/** A tool's parameters as sent to a provider with strict mode, and whether strict mode is asked for. */
interface WireParameters {
  parameters: Record<string, unknown>;
  strict: boolean;
}

/**
 * `tool.parameters` in strict form when it can be: a tool that says `strict: true` is already written so, one
 * that says `strict: false` is never sent strict, and any other (an MCP tool's, a configured client tool's) is
 * rewritten when its schema keeps to what strict mode accepts, else sent as it is, not strict.
 */
export function wireParameters(tool: ToolDefinition): WireParameters {
  if (tool.strict !== undefined) return { parameters: tool.parameters, strict: tool.strict };
  const strict = isObjectSchema(tool.parameters) ? strictNode(tool.parameters, 0) : undefined;
  return strict ? { parameters: strict, strict: true } : { parameters: tool.parameters, strict: false };
}

/**
 * A call's arguments read against the tool's own `parameters`: a property the schema requires but allows to be
 * null, left out, is `null`; a property it does not require and that may not be null, sent as `null`, is left
 * out. Nested objects (properties and array items) are read the same way. The value itself when nothing
 * changed, so a caller can tell.
 */
export function readLeniently(schema: unknown, value: unknown): unknown {
  if (!isSchema(schema)) return value;
  if (Array.isArray(value)) {
    if (!isSchema(schema.items)) return value;
    const read = value.map((item) => readLeniently(schema.items, item));
    return read.some((item, index) => item !== value[index]) ? read : value;
  }
  if (typeof value !== "object" || value === null || !isSchema(schema.properties)) return value;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const given = value as Record<string, unknown>;
  const read: Record<string, unknown> = { ...given };
  let changed = false;
  for (const [key, property] of Object.entries(schema.properties)) {
    if (!Object.hasOwn(given, key)) {
      if (!required.has(key) || !allowsNull(property)) continue;
      read[key] = null;
    } else if (given[key] === null) {
      if (required.has(key) || allowsNull(property)) continue;
      delete read[key];
    } else {
      read[key] = readLeniently(property, given[key]);
      if (read[key] === given[key]) continue;
    }
    changed = true;
  }
  return changed ? read : value;
}

/** Keywords strict mode accepts and that carry over unchanged. */
const KEPT = new Set([
  "type",
  "description",
  "title",
  "enum",
  "const",
  "pattern",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
]);
/** Keywords that only annotate: strict mode may refuse them, and leaving them out changes no call's meaning. */
const DROPPED = new Set([
  "$schema",
  "$id",
  "$comment",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
]);
/** The `format`s strict mode knows. */
const FORMATS = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
]);
/** Strict mode's nesting limit. */
const MAX_DEPTH = 10;

/** `node` in strict form, or undefined when it uses something strict mode refuses ($ref, allOf, open objects…). */
function strictNode(node: Schema, depth: number): Schema | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key)) continue;
    if (KEPT.has(key)) out[key] = value;
    else if (key === "format" && typeof value === "string" && FORMATS.has(value)) out[key] = value;
    else if (key === "items" && isSchema(value)) {
      const items = strictNode(value, depth + 1);
      if (!items) return undefined;
      out.items = items;
    } else if (key === "anyOf" && Array.isArray(value) && value.every(isSchema)) {
      const branches = value.map((branch) => strictNode(branch, depth + 1));
      if (branches.some((branch) => branch === undefined)) return undefined;
      out.anyOf = branches;
    } else if (key !== "properties" && key !== "required" && key !== "additionalProperties") return undefined;
  }
  // A schema of any value has no strict form: strict mode needs a type for every node.
  if (
    out.type === undefined &&
    out.anyOf === undefined &&
    out.enum === undefined &&
    out.const === undefined
  ) {
    return undefined;
  }
  if (!typesOf(node).includes("object")) {
    return node.properties === undefined && node.required === undefined ? out : undefined;
  }
  // An object: its properties known, no others, every one required and the optional ones nullable.
  if (
    !isSchema(node.properties) ||
    (node.additionalProperties !== undefined && node.additionalProperties !== false)
  ) {
    return undefined;
  }
  const required = new Set(Array.isArray(node.required) ? node.required : []);
  const properties: Schema = {};
  for (const [key, property] of Object.entries(node.properties)) {
    const strict = isSchema(property) ? strictNode(property, depth + 1) : undefined;
    if (!strict) return undefined;
    properties[key] = required.has(key) ? strict : nullable(strict);
    if (!properties[key]) return undefined;
  }
  return { ...out, properties, required: Object.keys(properties), additionalProperties: false };
}

/** `node` also accepting `null`, or undefined when that cannot be said plainly. */
function nullable(node: Schema): Schema | undefined {
  if (allowsNull(node)) return node;
  if (Array.isArray(node.anyOf)) return { ...node, anyOf: [...node.anyOf, { type: "null" }] };
  if (Object.hasOwn(node, "const")) return { anyOf: [node, { type: "null" }] };
  if (node.type === undefined) return undefined;
  const out: Schema = { ...node, type: [...typesOf(node), "null"] };
  if (Array.isArray(node.enum)) out.enum = [...node.enum, null];
  return out;
}

function allowsNull(node: unknown): boolean {
  if (!isSchema(node)) return false;
  if (typesOf(node).includes("null")) return true;
  if (Array.isArray(node.enum) && node.enum.includes(null)) return true;
  if (Object.hasOwn(node, "const") && node.const === null) return true;
  return [node.anyOf, node.oneOf].some((branches) => Array.isArray(branches) && branches.some(allowsNull));
}

function typesOf(node: Schema): string[] {
  return Array.isArray(node.type) ? node.type.map(String) : typeof node.type === "string" ? [node.type] : [];
}

function isObjectSchema(node: unknown): node is Schema {
  return isSchema(node) && typesOf(node).includes("object");
}

function isSchema(node: unknown): node is Schema {
  return typeof node === "object" && node !== null && !Array.isArray(node);
}
