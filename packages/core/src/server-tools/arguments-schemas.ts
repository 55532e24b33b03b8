import { type FieldError, formatFieldPath } from "@aptix/contracts";
import { Ajv, type ErrorObject } from "ajv";
import { readLeniently } from "../catalog/strict-parameters.js";
import type { ToolDefinition } from "../records/tool-definition.js";

/**
 * A call's arguments read against its tool's `parameters` (an omitted optional property read as `null` where
 * the schema says so, and the other way round: `readLeniently`), and their problems; none when they fit.
 */
export type SchemaCheck = (args: Record<string, unknown>) => ArgumentsReading;

interface ArgumentsReading {
  /** The arguments as read: the object given when reading changed nothing. */
  args: Record<string, unknown>;
  problems: FieldError[];
}

/** Said for a tool whose `parameters` no validator can compile: its calls are refused rather than let through. */
const UNCHECKABLE: FieldError[] = [
  { path: "", message: "cannot be checked: the tool's parameters are not a usable JSON Schema" },
];

/**
 * The arguments checks of tool catalogs, compiled once per catalog array (a mode's catalog is one array on every
 * call, `AgentCatalog.toolsFor`), keyed by tool name: the names a call may use are exactly these keys.
 */
export class ArgumentsSchemas {
  // As the MCP SDK checks schemas itself: draft-07 rules, keywords it does not know (OpenAI's, 2020-12's) ignored
  // rather than refused, formats left to the tool; every problem, so the model can fix them in one go.
  readonly #ajv = new Ajv({ strict: false, validateSchema: false, validateFormats: false, allErrors: true });
  readonly #byCatalog = new WeakMap<readonly ToolDefinition[], ReadonlyMap<string, SchemaCheck>>();

  of(tools: readonly ToolDefinition[]): ReadonlyMap<string, SchemaCheck> {
    let checks = this.#byCatalog.get(tools);
    if (checks === undefined) {
      checks = new Map(tools.map((tool) => [tool.name, this.#compile(tool.parameters)]));
      this.#byCatalog.set(tools, checks);
    }
    return checks;
  }

  #compile(parameters: Record<string, unknown>): SchemaCheck {
    try {
      const validate = this.#ajv.compile(parameters);
      return (given) => {
        const args = readLeniently(parameters, given) as Record<string, unknown>;
        if (validate(args)) return { args, problems: [] };
        // What is wrong with the values given first, then what is missing, then what is unknown: a short
        // summary should name the worst (`path` being a number) before the rest.
        const errors = [...(validate.errors ?? [])].sort((a, b) => rank(a) - rank(b));
        return { args, problems: errors.map((error) => problemOf(error, args)) };
      };
    } catch {
      return (args) => ({ args, problems: UNCHECKABLE });
    }
  }
}

/** One ajv error as a FieldError whose path names the argument (`items[2].name`), the missing or unknown one included. */
function problemOf(error: ErrorObject, args: unknown): FieldError {
  const path = pathOf(error.instancePath, args);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return { path: formatFieldPath([...path, String(params.missingProperty)]), message: "is required" };
    case "additionalProperties":
      return {
        path: formatFieldPath([...path, String(params.additionalProperty)]),
        message: "is not allowed",
      };
    case "type":
      return { path: formatFieldPath(path), message: `must be ${typesOf(params.type)}` };
    case "enum":
      return {
        path: formatFieldPath(path),
        message: `must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(", ")}`,
      };
    default:
      return {
        path: formatFieldPath(path),
        message: error.message ?? `breaks the schema's ${error.keyword}`,
      };
  }
}

function rank(error: ErrorObject): number {
  return error.keyword === "additionalProperties" ? 2 : error.keyword === "required" ? 1 : 0;
}

/** A JSON Pointer into `args` as path segments: an index where the value there is an array. */
function pathOf(pointer: string, args: unknown): PropertyKey[] {
  if (pointer === "") return [];
  let value = args;
  return pointer
    .slice(1)
    .split("/")
    .map((escaped) => {
      const key = escaped.replaceAll("~1", "/").replaceAll("~0", "~");
      const segment = Array.isArray(value) ? Number(key) : key;
      value = (value as Record<PropertyKey, unknown> | undefined)?.[segment];
      return segment;
    });
}

/** `"string"` or `["string", "null"]` as words: "a string", "a string or null". */
function typesOf(type: unknown): string {
  const article = (name: string) =>
    name === "null" ? name : `${/^[aeiou]/.test(name) ? "an" : "a"} ${name}`;
  return (Array.isArray(type) ? type : [type]).map((name) => article(String(name))).join(" or ");
}
