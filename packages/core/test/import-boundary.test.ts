import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

// Core talks to the world only through its ports (DESIGN.md §2): no provider SDK, database driver or HTTP
// framework may appear in its sources. Anything beyond this list needs a decision, not a quiet import.
const ALLOWED = new Set(["@aptix/contracts", "node:crypto", "vitest"]);

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

describe("core's import boundary", () => {
  const root = join(import.meta.dirname, "..", "src");
  const imports = sourceFiles(root).flatMap((file) =>
    [
      ...readFileSync(file, "utf8").matchAll(
        /(?:import|export)[^"'`;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
      ),
    ].map((match) => ({ file: relative(root, file), specifier: match[1] ?? match[2] ?? "" })),
  );

  it("finds the imports it checks", () => {
    expect(imports.length).toBeGreaterThan(50);
  });

  it("imports only its own files, the contracts and node:crypto (vitest in the testing kit)", () => {
    const outside = imports.filter(({ specifier }) => !specifier.startsWith(".") && !ALLOWED.has(specifier));
    expect(outside).toEqual([]);
    const vitestOutsideTesting = imports.filter(
      ({ file, specifier }) => specifier === "vitest" && !file.startsWith("testing/"),
    );
    expect(vitestOutsideTesting).toEqual([]);
  });

  it("declares no runtime dependency but the contracts", () => {
    const manifest = JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(["@aptix/contracts"]);
  });
});
