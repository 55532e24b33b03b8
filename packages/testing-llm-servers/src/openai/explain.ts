/**
 * Explains why a value fails a (rewritten) OpenAPI component schema, for error messages.
 *
 * Ajv decides validity; it reports every failing branch of every `anyOf`, which for the OpenAI document
 * means dozens of irrelevant "required" errors (one per `Item` variant). This walker re-checks the value
 * and, at each `anyOf`, keeps only the branch that fits best: branches whose discriminator (`type`, `role`)
 * or JSON type does not match are dropped, then the branch that failed deepest wins. When every branch
 * mismatches on the same discriminator, the allowed values of all branches are merged into one error
 * ("'text' is not one of 'input_text', 'input_image', 'input_file'").
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface Explained {
  /** JSON pointer of the offending value (for a missing property: where it should be). */
  pointer: string;
  keyword: string;
  message: string;
  /** For `enum`/`const` failures: the allowed values, so alternatives can be merged. */
  allowed?: Json[];
}

const DISCRIMINATORS = new Set(["type", "role"]);

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

function depth(pointer: string): number {
  return pointer === "" ? 0 : pointer.split("/").length - 1;
}

export function show(value: unknown): string {
  if (typeof value === "string") return `'${value}'`;
  const json = JSON.stringify(value);
  if (json === undefined) return String(value);
  return json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = jsonType(value);
  return actual === type || (type === "number" && actual === "integer");
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

export class SchemaExplainer {
  constructor(private readonly resolveRef: (ref: string) => Json | undefined) {}

  explain(schema: Json, value: unknown, pointer = "", guard = 0): Explained[] {
    if (guard > 200) return [];
    if (schema === true || schema === undefined) return [];
    if (schema === false) return [{ pointer, keyword: "false", message: "is not allowed" }];
    if (!isObject(schema)) return [];
    const errors: Explained[] = [];

    if (typeof schema.$ref === "string") {
      const target = this.resolveRef(schema.$ref);
      if (target !== undefined) errors.push(...this.explain(target, value, pointer, guard + 1));
    }
    if (Array.isArray(schema.allOf)) {
      for (const part of schema.allOf) errors.push(...this.explain(part, value, pointer, guard + 1));
    }
    if (Array.isArray(schema.anyOf)) errors.push(...this.explainAnyOf(schema.anyOf, value, pointer, guard));

    if (schema.type !== undefined) {
      const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).map(String);
      if (!types.some((t) => matchesType(value, t))) {
        return [
          ...errors,
          { pointer, keyword: "type", message: `${show(value)} is not of type ${types.join(" | ")}` },
        ];
      }
    }
    if (Array.isArray(schema.enum) && !schema.enum.some((v) => equal(v, value))) {
      errors.push({ pointer, keyword: "enum", message: "", allowed: schema.enum });
    }
    if (schema.const !== undefined && !equal(schema.const, value)) {
      errors.push({ pointer, keyword: "const", message: "", allowed: [schema.const] });
    }

    if (typeof value === "string") {
      if (typeof schema.minLength === "number" && value.length < schema.minLength) {
        errors.push({
          pointer,
          keyword: "minLength",
          message: `must have at least ${schema.minLength} characters`,
        });
      }
      if (typeof schema.maxLength === "number" && value.length > schema.maxLength) {
        errors.push({
          pointer,
          keyword: "maxLength",
          message: `must have at most ${schema.maxLength} characters`,
        });
      }
      if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
        errors.push({ pointer, keyword: "pattern", message: `must match the pattern ${schema.pattern}` });
      }
    }
    if (typeof value === "number") {
      if (typeof schema.minimum === "number" && value < schema.minimum) {
        errors.push({ pointer, keyword: "minimum", message: `${value} is less than ${schema.minimum}` });
      }
      if (typeof schema.maximum === "number" && value > schema.maximum) {
        errors.push({ pointer, keyword: "maximum", message: `${value} is greater than ${schema.maximum}` });
      }
    }
    if (Array.isArray(value)) {
      if (typeof schema.minItems === "number" && value.length < schema.minItems) {
        errors.push({ pointer, keyword: "minItems", message: `must have at least ${schema.minItems} items` });
      }
      if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
        errors.push({ pointer, keyword: "maxItems", message: `must have at most ${schema.maxItems} items` });
      }
      const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
      value.forEach((item, i) => {
        const itemSchema = i < prefix.length ? prefix[i] : schema.items;
        if (itemSchema !== undefined)
          errors.push(...this.explain(itemSchema, item, `${pointer}/${i}`, guard + 1));
      });
    }
    if (isObject(value)) {
      const properties = isObject(schema.properties) ? schema.properties : {};
      if (Array.isArray(schema.required)) {
        for (const name of schema.required) {
          if (typeof name === "string" && !(name in value)) {
            errors.push({
              pointer: `${pointer}/${escapePointer(name)}`,
              keyword: "required",
              message: "is required",
            });
          }
        }
      }
      for (const [key, sub] of Object.entries(value)) {
        const at = `${pointer}/${escapePointer(key)}`;
        const propSchema = properties[key];
        if (propSchema !== undefined) {
          errors.push(...this.explain(propSchema, sub, at, guard + 1));
        } else if (schema.additionalProperties === false) {
          errors.push({ pointer: at, keyword: "additionalProperties", message: "is not a known property" });
        } else if (isObject(schema.additionalProperties)) {
          errors.push(...this.explain(schema.additionalProperties, sub, at, guard + 1));
        }
      }
      if (typeof schema.maxProperties === "number" && Object.keys(value).length > schema.maxProperties) {
        errors.push({
          pointer,
          keyword: "maxProperties",
          message: `must have at most ${schema.maxProperties} properties`,
        });
      }
    }
    return errors;
  }

  /** Does this branch's failure say "this is a different variant" rather than "a broken instance of it"? */
  private mismatched(errors: Explained[], pointer: string): boolean {
    return errors.some((e) => {
      if (e.pointer === pointer && (e.keyword === "type" || e.keyword === "enum" || e.keyword === "const")) {
        return true;
      }
      const parent = e.pointer.slice(0, e.pointer.lastIndexOf("/"));
      const last = e.pointer.slice(e.pointer.lastIndexOf("/") + 1);
      return (
        parent === pointer &&
        DISCRIMINATORS.has(last) &&
        (e.keyword === "enum" || e.keyword === "const" || e.keyword === "required" || e.keyword === "type")
      );
    });
  }

  private explainAnyOf(branches: Json[], value: unknown, pointer: string, guard: number): Explained[] {
    const results = branches.map((b) => this.explain(b, value, pointer, guard + 1));
    if (results.some((r) => r.length === 0)) return [];
    const fitting = results.filter((r) => !this.mismatched(r, pointer));
    if (fitting.length > 0) {
      return fitting.reduce((best, r) => {
        const bestDepth = Math.max(...best.map((e) => depth(e.pointer)));
        const rDepth = Math.max(...r.map((e) => depth(e.pointer)));
        return rDepth > bestDepth || (rDepth === bestDepth && r.length < best.length) ? r : best;
      });
    }
    // Every branch is another variant: merge the discriminator alternatives, e.g. all allowed `type`s.
    const merged = new Map<string, { allowed: Json[]; count: number }>();
    for (const r of results) {
      for (const e of r) {
        if (!e.allowed) continue;
        const entry = merged.get(e.pointer) ?? { allowed: [], count: 0 };
        for (const v of e.allowed) if (!entry.allowed.some((a) => equal(a, v))) entry.allowed.push(v);
        entry.count += 1;
        merged.set(e.pointer, entry);
      }
    }
    let chosen: [string, { allowed: Json[]; count: number }] | undefined;
    for (const candidate of merged) {
      if (!chosen || candidate[1].count > chosen[1].count) chosen = candidate;
    }
    if (chosen) return [{ pointer: chosen[0], keyword: "enum", message: "", allowed: chosen[1].allowed }];
    const types = results.flatMap((r) => r.filter((e) => e.pointer === pointer && e.keyword === "type"));
    if (types.length === results.length) {
      const expected = [...new Set(types.map((e) => e.message.replace(/^.* is not of type /, "")))];
      return [{ pointer, keyword: "type", message: `${show(value)} is not of type ${expected.join(" | ")}` }];
    }
    return results[0] ?? [];
  }
}
