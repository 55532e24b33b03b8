import type { z } from "zod";

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "object":
      return "an object";
    case "string":
      return "a string";
    case "number":
      // JSON has no Infinity or NaN, but a numeral like 1e400 parses to Infinity: say so, not "a number".
      return Number.isFinite(value) ? "a number" : `a non-finite number (${value})`;
    case "boolean":
      return "a boolean";
    default:
      return typeof value;
  }
}

const EXPECTED: Record<string, string> = {
  object: "a JSON object",
  array: "an array",
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
};

const UNITS: Record<string, string> = { string: "characters", array: "items" };

/** `z.int()` reports its safe-integer bounds with origin "int", not "number". */
const NUMERIC_ORIGINS = new Set(["number", "int", "bigint"]);

/**
 * Messages for issues whose schema gave none, written for a client developer reading an error response.
 * Passed per parse, so the library never touches zod's global configuration.
 */
export const contractErrorMessages: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      return `must be ${EXPECTED[issue.expected] ?? issue.expected}, not ${typeOf(issue.input)}`;
    case "too_small": {
      const min = Number(issue.minimum);
      if (NUMERIC_ORIGINS.has(issue.origin))
        return `must be ${issue.inclusive ? "at least" : "greater than"} ${min}`;
      if (min === 1) return "must not be empty";
      return `must have at least ${min} ${UNITS[issue.origin] ?? "items"}`;
    }
    case "too_big": {
      const max = Number(issue.maximum);
      if (NUMERIC_ORIGINS.has(issue.origin))
        return `must be ${issue.inclusive ? "at most" : "less than"} ${max}`;
      return `must have at most ${max} ${UNITS[issue.origin] ?? "items"}`;
    }
    case "invalid_value":
      if (issue.input === undefined) return "is required";
      return `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(", ")}`;
    case "invalid_union":
      if ("options" in issue && Array.isArray(issue.options)) {
        return `must be one of ${issue.options.map((value: unknown) => JSON.stringify(value)).join(", ")}`;
      }
      return "does not match any allowed shape";
    case "invalid_format":
      return `must be a valid ${issue.format}`;
    case "unrecognized_keys":
      // Each key gets its own field error; zod's own message would list every key, however many.
      return "has fields the contract does not define";
    default:
      return undefined;
  }
};
