import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkDocument } from "../../src/retrieval/chunk-document.js";
import type { DocumentChunk } from "../../src/retrieval/document-chunk.js";
import { languageOf } from "../../src/retrieval/language-of.js";

interface Bounds {
  maxLines: number;
  maxChars: number;
  overlapLines: number;
}

const DEFAULTS: Bounds = { maxLines: 60, maxChars: 2400, overlapLines: 2 };

function fixture(name: string): string {
  return readFileSync(join(import.meta.dirname, "fixtures", name), "utf8");
}

// The test's own reading of line numbers, as an editor shows them.
function linesOf(contents: string): string[] {
  return contents.split(/\r\n|\r|\n/);
}

const blank = (line: string) => line.trim() === "";

/** The 1-based number of the first line matching `pattern`, failing the test when there is none. */
function lineNumber(lines: readonly string[], pattern: RegExp, after = 0): number {
  const index = lines.findIndex((line, at) => at >= after && pattern.test(line));
  expect(index, `no line matches ${pattern}`).toBeGreaterThanOrEqual(0);
  return index + 1;
}

function chunkAt(chunks: readonly DocumentChunk[], line: number): DocumentChunk {
  const chunk = chunks.find(({ startLine, endLine }) => startLine <= line && line <= endLine);
  if (!chunk) throw new Error(`no chunk holds line ${line}`);
  return chunk;
}

/** What every chunking must satisfy: exact lines, coverage, no blank edges, order, bounds and overlap. */
function expectWellFormed(
  contents: string,
  chunks: readonly DocumentChunk[],
  bounds: Bounds = DEFAULTS,
): void {
  const lines = linesOf(contents);
  let previous: DocumentChunk | undefined;
  for (const chunk of chunks) {
    expect(chunk.startLine).toBeGreaterThanOrEqual(1);
    expect(chunk.endLine).toBeGreaterThanOrEqual(chunk.startLine);
    expect(chunk.text).toBe(lines.slice(chunk.startLine - 1, chunk.endLine).join("\n"));
    expect(blank(lines[chunk.startLine - 1] ?? "")).toBe(false);
    expect(blank(lines[chunk.endLine - 1] ?? "")).toBe(false);
    expect(chunk.endLine - chunk.startLine + 1).toBeLessThanOrEqual(bounds.maxLines);
    if (chunk.startLine !== chunk.endLine) expect(chunk.text.length).toBeLessThanOrEqual(bounds.maxChars);
    if (previous) {
      expect(chunk.startLine).toBeGreaterThan(previous.startLine);
      expect(chunk.startLine).toBeGreaterThanOrEqual(previous.endLine + 1 - bounds.overlapLines);
      // Chunks overlap only as the pieces of one block cut hard, which holds no blank line.
      const shared = lines.slice(chunk.startLine - 1, previous.endLine + 1);
      if (chunk.startLine <= previous.endLine) expect(shared.some(blank)).toBe(false);
    }
    previous = chunk;
  }
  lines.forEach((line, index) => {
    if (!blank(line)) expect(chunkAt(chunks, index + 1).text.length).toBeGreaterThan(0);
  });
}

/** Chunks a fixture under `path`, checking it is well formed and in `language` throughout. */
function chunkFixture(name: string, path: string, language: string) {
  const contents = fixture(name);
  const chunks = chunkDocument({ path, contents });
  expectWellFormed(contents, chunks);
  expect(chunks.every((chunk) => chunk.language === language)).toBe(true);
  return { lines: linesOf(contents), chunks };
}

describe("languageOf", () => {
  it.each([
    ["src/a.ts", "typescript"],
    ["src/App.TSX", "typescript"],
    ["lib/a.js", "javascript"],
    ["lib/a.jsx", "javascript"],
    ["lib/a.mjs", "javascript"],
    ["lib/a.cjs", "javascript"],
    ["tool/main.py", "python"],
    ["Api/InvoiceController.cs", "csharp"],
    ["src/Main.java", "java"],
    ["cmd/main.go", "go"],
    ["src/lib.rs", "rust"],
    ["app/models/user.rb", "ruby"],
    ["README.md", "markdown"],
    ["package.json", "json"],
    ["ci.yaml", "yaml"],
    ["ci.yml", "yaml"],
    ["db/schema.sql", "sql"],
    ["scripts/build.sh", "bash"],
    ["index.html", "html"],
    ["site.css", "css"],
    ["LICENSE", "text"],
    [".env", "text"],
    ["notes.txt", "text"],
    ["archive.tar.gz", "text"],
    ["C:\\work\\Program.cs", "csharp"],
    ["dir.ts/Makefile", "text"],
  ])("%s is %s", (path, language) => {
    expect(languageOf(path)).toBe(language);
  });

  it("prefers the language the request names", () => {
    expect(languageOf("src/a.ts", "javascript")).toBe("javascript");
    expect(languageOf("notes", " Kotlin ")).toBe("kotlin");
    expect(languageOf("src/a.ts", "  ")).toBe("typescript");
  });
});

describe("chunkDocument on real sources", () => {
  it("cuts a TypeScript service at its declarations, keeping doc comments with them", () => {
    const { lines, chunks } = chunkFixture("order-service.ts.txt", "src/order-service.ts", "typescript");
    expect(chunks.length).toBeGreaterThan(2);

    expect(chunks[0]?.startLine).toBe(1);
    const total = lineNumber(lines, /^export function orderTotal/);
    expect(chunkAt(chunks, total).startLine).toBe(lineNumber(lines, /^\/\*\*/, total - 6));
    const service = lineNumber(lines, /^export class OrderService/);
    expect(chunkAt(chunks, service).startLine).toBe(lineNumber(lines, /^\/\*\*/, service - 7));
    const schema = lineNumber(lines, /^const NewOrderSchema/);
    expect(chunkAt(chunks, schema).startLine).toBe(schema);
  });

  it("keeps Python decorators with their def or class", () => {
    const { lines, chunks } = chunkFixture("billing.py", "billing/billing.py", "python");

    const decorators = lines.flatMap((line, index) => (/^\s*@/.test(line) ? [index + 1] : []));
    expect(decorators.length).toBeGreaterThan(4);
    for (const decorator of decorators) {
      const target = lineNumber(lines, /^\s*(?:async\s+)?(?:def|class)\b/, decorator);
      expect(chunkAt(chunks, target)).toBe(chunkAt(chunks, decorator));
    }
    for (const top of [/^@dataclass\(frozen=True\)/, /^@bp\.route\("\/invoices", methods=\["POST"\]\)/]) {
      const line = lineNumber(lines, top);
      expect(chunkAt(chunks, line).startLine).toBe(line);
    }
  });

  it("keeps a C# summary and attributes with the member they document", () => {
    const { lines, chunks } = chunkFixture("InvoiceController.cs", "Api/InvoiceController.cs", "csharp");

    const summaries = lines.flatMap((line, index) => (line.trim() === "/// <summary>" ? [index + 1] : []));
    expect(summaries.length).toBeGreaterThan(5);
    for (const summary of summaries) {
      const member = summary + lines.slice(summary).findIndex((line) => !/^\s*(?:\/\/\/|\[)/.test(line)) + 1;
      expect(lines[member - 1]).toMatch(/\b(?:public|class|record)\b/);
      expect(chunkAt(chunks, member)).toBe(chunkAt(chunks, summary));
    }
    const record = lineNumber(lines, /^public sealed record CreateInvoiceRequest/);
    expect(chunkAt(chunks, record).startLine).toBe(record - 3);
  });

  it("starts Markdown chunks at headings, not at '#' lines inside fenced code", () => {
    const { lines, chunks } = chunkFixture("README.md", "docs/README.md", "markdown");

    for (const heading of [/^## Installation/, /^## Usage/, /^### Reminders/, /^## Development/, /^## FAQ/]) {
      const line = lineNumber(lines, heading);
      expect(chunkAt(chunks, line).startLine).toBe(line);
    }
    const fenced = lineNumber(lines, /^# this is not a heading/);
    expect(chunkAt(chunks, fenced).startLine).toBe(lineNumber(lines, /^## Usage/));
    // A heading inside a chunk follows a fragment too small to stand alone, or opens one.
    let fence = false;
    lines.forEach((line, index) => {
      if (/^```/.test(line)) fence = !fence;
      if (fence || !/^#{1,6} /.test(line)) return;
      const chunk = chunkAt(chunks, index + 1);
      if (chunk.startLine === index + 1) return;
      const before = lines.slice(chunk.startLine - 1, index).filter((text) => !blank(text)).length;
      const next = lines.findIndex((text, at) => at > index && /^#{1,6} /.test(text));
      const own = lines.slice(index, next < 0 ? undefined : next).filter((text) => !blank(text)).length;
      expect(Math.min(before, own)).toBeLessThan(3);
    });
  });

  it("cuts a JSON document without blank lines hard, with a two-line overlap", () => {
    const settings = Object.fromEntries(
      Array.from({ length: 70 }, (_, index) => [
        `setting${index}`,
        { enabled: index % 2 === 0, weight: index },
      ]),
    );
    const contents = `${JSON.stringify({ name: "invoicer", settings }, null, 2)}\n`;
    const chunks = chunkDocument({ path: "config/settings.json", contents });
    expectWellFormed(contents, chunks);
    expect(chunks.every((chunk) => chunk.language === "json")).toBe(true);
    expect(chunks.length).toBeGreaterThan(3);
    for (const [index, chunk] of chunks.entries()) {
      const previous = chunks[index - 1];
      if (previous) expect(previous.endLine - chunk.startLine + 1).toBe(2);
    }
    expect(chunks.at(-1)?.endLine).toBe(linesOf(contents).length - 1);
  });

  it("merges short paragraphs of plain text up to the bounds", () => {
    const paragraphs = Array.from({ length: 30 }, (_, index) => `Paragraph ${index}, line one.\nLine two.`);
    const contents = paragraphs.join("\n\n");
    const chunks = chunkDocument({ path: "NOTES", contents, maxLines: 20 });
    expectWellFormed(contents, chunks, { ...DEFAULTS, maxLines: 20 });
    expect(chunks.every((chunk) => chunk.language === "text")).toBe(true);
    expect(chunks.map((chunk) => [chunk.startLine, chunk.endLine])).toEqual([
      [1, 20],
      [22, 41],
      [43, 62],
      [64, 83],
      [85, 89],
    ]);
  });

  it.each([
    ["order-service.ts.txt", "src/order-service.ts"],
    ["billing.py", "billing.py"],
    ["InvoiceController.cs", "InvoiceController.cs"],
    ["README.md", "README.md"],
  ])("numbers the lines of %s alike with CRLF, CR and without a final newline", (name, path) => {
    const contents = fixture(name);
    const expected = chunkDocument({ path, contents });
    expect(chunkDocument({ path, contents: contents.replaceAll("\n", "\r\n") })).toEqual(expected);
    expect(chunkDocument({ path, contents: contents.replaceAll("\n", "\r") })).toEqual(expected);
    expect(chunkDocument({ path, contents: contents.trimEnd() })).toEqual(expected);
  });

  it("answers no chunk for an empty or blank document", () => {
    expect(chunkDocument({ path: "a.ts", contents: "" })).toEqual([]);
    expect(chunkDocument({ path: "a.ts", contents: " \n\t\r\n\n" })).toEqual([]);
  });

  it("keeps a line longer than maxChars whole, as a chunk of its own", () => {
    const long = "x".repeat(50);
    const chunks = chunkDocument({ path: "a.txt", contents: `a\n${long}\nb`, maxChars: 20 });
    expect(chunks.map((chunk) => chunk.text)).toEqual(["a", long, "b"]);
  });

  it("refuses bounds it cannot honour", () => {
    expect(() => chunkDocument({ path: "a", contents: "x", maxLines: 0 })).toThrow(RangeError);
    expect(() => chunkDocument({ path: "a", contents: "x", maxChars: 1.5 })).toThrow(RangeError);
    expect(() => chunkDocument({ path: "a", contents: "x", overlapLines: -1 })).toThrow(RangeError);
    expect(() => chunkDocument({ path: "a", contents: "x", maxLines: 2, overlapLines: 2 })).toThrow(
      RangeError,
    );
  });
});

describe("chunkDocument on random text", () => {
  const line = fc.oneof(
    fc.constantFrom(
      "",
      "   ",
      "\t",
      "export function f() {",
      "  return 1;",
      "}",
      "@decorator",
      "/// <summary>",
      "def g():",
      "# Heading",
      "```",
      "class A:",
      "    pass",
    ),
    fc.string({ maxLength: 120 }).map((text) => text.replace(/[\r\n]/g, " ")),
  );
  const document = fc.record({
    lines: fc.array(line, { maxLength: 120 }),
    newline: fc.constantFrom("\n", "\r\n", "\r"),
    finalNewline: fc.boolean(),
    language: fc.constantFrom("typescript", "python", "csharp", "markdown", "json", "text"),
    maxLines: fc.integer({ min: 1, max: 25 }),
    maxChars: fc.integer({ min: 1, max: 400 }),
    overlap: fc.nat({ max: 24 }),
  });

  it("keeps exact line numbers, covers every non-blank line and stays within the bounds", () => {
    fc.assert(
      fc.property(document, (doc) => {
        const contents = doc.lines.join(doc.newline) + (doc.finalNewline ? doc.newline : "");
        const bounds = {
          maxLines: doc.maxLines,
          maxChars: doc.maxChars,
          overlapLines: doc.overlap % doc.maxLines,
        };
        const chunks = chunkDocument({ path: "random", contents, language: doc.language, ...bounds });
        expectWellFormed(contents, chunks, bounds);
        expect(chunks.every((chunk) => chunk.language === doc.language)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("gives CRLF and LF the same chunks", () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 80 }), (lines) => {
        const lf = chunkDocument({ path: "a.ts", contents: lines.join("\n"), maxLines: 10, maxChars: 300 });
        const crlf = chunkDocument({
          path: "a.ts",
          contents: lines.join("\r\n"),
          maxLines: 10,
          maxChars: 300,
        });
        expect(crlf).toEqual(lf);
      }),
      { numRuns: 200 },
    );
  });
});
