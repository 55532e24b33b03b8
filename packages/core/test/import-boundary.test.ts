import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf, importsUnder } from "./support/source-imports.js";

// Core talks to the world only through its ports (docs/architecture.md): no provider SDK, database driver or HTTP
// framework may appear in its sources. Anything beyond this list needs a decision, not a quiet import.
// gpt-tokenizer is pure computation (no I/O): Composition counts the [CONTEXT] block's tokens with it.
// ajv too: Server Tool Execution checks a call's arguments against its tool's JSON Schema (docs/security.md).
// No test runner either: the testing kit has none, the store contract suites are @aptix/testing-stores.
const ALLOWED = new Set(["@aptix/contracts", "ajv", "gpt-tokenizer", "node:crypto"]);

describe("core's import boundary", () => {
  const imports = importsUnder(join(import.meta.dirname, "..", "src"));

  it("finds the imports it checks", () => {
    expect(imports.length).toBeGreaterThan(50);
  });

  it("catches every form of import", () => {
    const source = [
      'import { a } from "./a.js";',
      'import type { B } from "./b.js";',
      'export * from "@aptix/contracts";',
      'import "hono";',
      'const pg = require("pg");',
      "const x = await import(`x`);",
      "const y = await import(name);",
    ].join("\n");
    expect(importsOf(source).sort()).toEqual(
      ["./a.js", "./b.js", "@aptix/contracts", "hono", "pg", "x", "name"].sort(),
    );
  });

  it("imports only its own files, the contracts, ajv, gpt-tokenizer and node:crypto", () => {
    const outside = imports.filter(({ specifier }) => !specifier.startsWith(".") && !ALLOWED.has(specifier));
    expect(outside).toEqual([]);
  });

  it("declares no runtime dependency but the contracts, ajv and gpt-tokenizer", () => {
    const manifest = JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(["@aptix/contracts", "ajv", "gpt-tokenizer"]);
  });
});
