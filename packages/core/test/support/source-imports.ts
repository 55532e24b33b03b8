import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/** The `.ts` files under `directory`, at any depth. */
function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/**
 * The specifiers a source file loads, in every form: `import … from`, `export … from`, a bare `import "x"`,
 * `import(x)` and `require(x)`. A dynamic one that is not a plain literal comes back as written, so it is
 * flagged rather than missed.
 */
export function importsOf(source: string): string[] {
  const staticForms = /(?:import|export)[^"'`;]*?from\s*(["'`])([^"'`]+)\1|\bimport\s*(["'`])([^"'`]+)\3/g;
  const dynamicForms = /\b(?:import|require)\s*\(\s*([^)]*?)\s*\)/g;
  return [
    ...[...source.matchAll(staticForms)].map((match) => match[2] ?? match[4] ?? ""),
    ...[...source.matchAll(dynamicForms)].map((match) => {
      const argument = match[1] ?? "";
      return /^(["'`])[^"'`$]*\1$/.test(argument) ? argument.slice(1, -1) : argument;
    }),
  ];
}

/** Every import of every source file under `root`: the file relative to `root`, and the specifier as written. */
export function importsUnder(root: string): { file: string; specifier: string }[] {
  return sourceFiles(root).flatMap((file) =>
    importsOf(readFileSync(file, "utf8")).map((specifier) => ({ file: relative(root, file), specifier })),
  );
}
