import type { z } from "zod";

/**
 * A `superRefine` for the array `listName` whose entries' `key` must all differ: each repeat is reported at its
 * own `key`, naming the entry it repeats. JSON Schema cannot say this (`uniqueItems` compares whole entries),
 * so the rule exists only in zod.
 */
export function uniqueIds<K extends string>(listName: string, key: K) {
  return (entries: readonly Record<K, string>[], ctx: z.RefinementCtx) => {
    const firstIndex = new Map<string, number>();
    entries.forEach((entry, index) => {
      const first = firstIndex.get(entry[key]);
      if (first === undefined) firstIndex.set(entry[key], index);
      else {
        ctx.addIssue({
          code: "custom",
          path: [index, key],
          message: `must be unique: ${listName}[${first}] has the same ${key}`,
        });
      }
    });
  };
}
