import type { RequestLimits } from "../../src/index.js";

/**
 * Whether the published JSON Schema (schema/*.json) can express the rule an invalid vector breaks:
 * - `rejects`: a JSON Schema validator rejects the document, as zod does;
 * - `zod-only`: the rule exists only in the zod validators (see `contractJsonSchemas`), so a JSON Schema
 *   validator ACCEPTS the document. The tests assert this too, so the documented gap cannot grow silently.
 */
type JsonSchemaVerdict = "rejects" | "zod-only";

interface VectorBase {
  /** What the vector shows; also the test's name. */
  name: string;
  /** The parsed JSON body (or any value a caller might pass). */
  input: unknown;
  /**
   * The body as JSON text, for a body that `JSON.stringify(input)` cannot write back: `1e400` parses to Infinity,
   * which JSON.stringify writes as `null`. `input` is then `JSON.parse(json)`.
   */
  json?: string;
}

export interface ValidVector extends VectorBase {
  valid: true;
}

export interface InvalidVector extends VectorBase {
  valid: false;
  /** Exactly the `details.fields[].path` values the validator reports, in any order (`""` is the whole document). */
  paths: readonly string[];
  jsonSchema: JsonSchemaVerdict;
  /** Optional: a fragment the message of a path must contain, for rules whose wording is part of the contract. */
  messages?: Readonly<Record<string, string>>;
}

export type Vector = ValidVector | InvalidVector;

/**
 * A request vector may run against smaller limits than the defaults (`createAgentExecuteRequestValidator(limits)`),
 * which keeps the size vectors small. Its JSON Schema is then built from `createAgentExecuteRequestSchema(limits)`
 * exactly as `contractJsonSchemas` builds the published one, rather than read from schema/*.json.
 */
export type RequestVector = Vector & { limits?: Partial<RequestLimits> };

export type ResponseVector = Vector;

/** A vector body given as JSON text, for numbers JSON.stringify cannot write back (`1e400` parses to Infinity). */
export const fromJson = (json: string) => ({ json, input: JSON.parse(json) as unknown });
