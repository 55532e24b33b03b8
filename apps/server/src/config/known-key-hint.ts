import { z } from "zod";
import { didYouMean } from "./did-you-mean.js";

/** Every property name anywhere in `schema`'s JSON Schema: the keys a config file may use, at some depth. */
function propertyNames(schema: z.ZodType): Set<string> {
  const names = new Set<string>();
  const visit = (node: unknown) => {
    if (typeof node !== "object" || node === null) return;
    if (Array.isArray(node)) {
      for (const entry of node) visit(entry);
      return;
    }
    const { properties } = node as { properties?: Record<string, unknown> };
    if (properties) for (const name of Object.keys(properties)) names.add(name);
    for (const value of Object.values(node)) visit(value);
  };
  // `unrepresentable: "any"`: the refinements and transforms JSON Schema cannot state do not matter here.
  visit(z.toJSONSchema(schema, { unrepresentable: "any", io: "input" }));
  return names;
}

/**
 * ` (did you mean "bootPrompt"?)` for an unknown key close to one `schema` knows (a typo: at most a third of its
 * letters off), else nothing.
 */
export function knownKeyHint(schema: z.ZodType): (unknown: string) => string {
  return didYouMean([...propertyNames(schema)]);
}
