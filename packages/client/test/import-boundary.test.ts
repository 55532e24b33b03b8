import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// The client runs in VS Code's extension host, Node and browsers: its sources use web APIs only (fetch, web
// streams, TextDecoder, AbortSignal, crypto.randomUUID, timers), never a Node module or a Node global.
const ALLOWED = new Set(["@aptix/contracts", "eventsource-parser", "zod"]);
const NODE_GLOBALS = ["Buffer", "process", "require", "__dirname", "__filename", "global", "setImmediate"];

/** The module specifiers of a file: static `from "x"` and `import "x"`, and any `import(…)` or `require(…)` as written. */
function importsOf(source: string): string[] {
  const specifiers = [...source.matchAll(/\bfrom\s*"([^"]+)"|^import\s*"([^"]+)"/gm)].map(
    (m) => m[1] ?? m[2] ?? "",
  );
  const calls = [...source.matchAll(/\b(?:import|require)\s*\(([^)]*)\)/g)].map((m) => (m[1] ?? "").trim());
  return [...specifiers, ...calls];
}

/** The source without comments and string contents, so prose mentioning `process` is no hit. */
function codeOnly(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*$/gm, "")
    .replace(/(["'`])(?:\\.|(?!\1)[^\\])*\1/g, '""');
}

describe("the client's import boundary", () => {
  const root = join(import.meta.dirname, "..", "src");
  const files = readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => ({ file, source: readFileSync(join(root, file), "utf8") }));

  it("finds the files it checks", () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it("imports only its own files, the contracts, eventsource-parser and zod: no node: module", () => {
    const outside = files.flatMap(({ file, source }) =>
      importsOf(source)
        .filter((specifier) => !specifier.startsWith("./") && !ALLOWED.has(specifier))
        .map((specifier) => ({ file, specifier })),
    );
    expect(outside).toEqual([]);
  });

  it("uses no Node global", () => {
    const used = files.flatMap(({ file, source }) =>
      NODE_GLOBALS.filter((name) => new RegExp(`(?<![.\\w$])${name}\\b`).test(codeOnly(source))).map(
        (name) => ({ file, name }),
      ),
    );
    expect(used).toEqual([]);
  });

  it("catches what it looks for", () => {
    expect(importsOf('import { readFile } from "node:fs";\nconst x = require("os");')).toEqual([
      "node:fs",
      '"os"',
    ]);
    expect(/(?<![.\w$])Buffer\b/.test(codeOnly('const b = Buffer.from("x"); // Buffer'))).toBe(true);
    expect(/(?<![.\w$])process\b/.test(codeOnly('// process\nconst s = "process";'))).toBe(false);
  });

  it("declares no runtime dependency but the contracts and the SSE parser", () => {
    const manifest = JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual([
      "@aptix/contracts",
      "eventsource-parser",
    ]);
    expect(Object.keys(manifest.peerDependencies ?? {})).toEqual(["zod"]);
  });
});
