import { describe, expect, it } from "vitest";
import type { ToolDefinition } from "../../src/index.js";
import { ArgumentsSchemas, type SchemaCheck } from "../../src/server-tools/arguments-schemas.js";

const tool = (name: string, parameters: Record<string, unknown>): ToolDefinition => ({
  name,
  description: name,
  parameters,
});

const edits = tool("edit", {
  type: "object",
  properties: {
    files: {
      type: "array",
      items: {
        type: "object",
        properties: { name: { type: "string" }, mode: { enum: ["add", "drop"] } },
        required: ["name"],
        additionalProperties: false,
      },
    },
    limit: { type: ["integer", "null"], minimum: 1 },
  },
  required: ["files"],
});

/** The check's problems only. */
const problemsOf = (check: SchemaCheck | undefined) => (args: Record<string, unknown>) => {
  if (check === undefined) throw new Error("no check for the tool");
  return check(args).problems;
};

describe("ArgumentsSchemas", () => {
  it("compiles a catalog's schemas once: the same checks for the same catalog array", () => {
    const schemas = new ArgumentsSchemas();
    const catalog = Object.freeze([edits]);
    const checks = schemas.of(catalog);
    expect(schemas.of(catalog)).toBe(checks);
    expect([...checks.keys()]).toEqual(["edit"]);
    expect(schemas.of([edits])).not.toBe(checks);
  });

  it("names each problem by its argument's path, array indexes and escaped keys included", () => {
    const check = problemsOf(new ArgumentsSchemas().of([edits]).get("edit"));
    expect(check({ files: [{ name: "a" }, { name: 3, mode: "move", "a/b~c": 1 }, {}], limit: 0 })).toEqual([
      { path: "files[1].name", message: "must be a string" },
      { path: "files[1].mode", message: 'must be one of "add", "drop"' },
      { path: "limit", message: "must be >= 1" },
      { path: "files[2].name", message: "is required" },
      { path: "files[1].a/b~c", message: "is not allowed" },
    ]);
    expect(check({ files: [], limit: "x" })).toEqual([
      { path: "limit", message: "must be an integer or null" },
    ]);
    expect(check({ files: [{ name: "a", mode: "add" }], limit: null })).toEqual([]);
  });

  it("answers a problem for every call of a tool whose schema cannot be compiled", () => {
    const check = problemsOf(new ArgumentsSchemas().of([tool("bad", { type: "strin" })]).get("bad"));
    expect(check({})).toEqual([
      { path: "", message: "cannot be checked: the tool's parameters are not a usable JSON Schema" },
    ]);
  });

  it("ignores keywords it does not know and formats, as the MCP SDK does, and reads 2020-12 schemas", () => {
    const check = problemsOf(
      new ArgumentsSchemas()
        .of([
          tool("mcp", {
            $schema: "https://json-schema.org/draft/2020-12/schema",
            type: "object",
            properties: {
              url: { type: "string", format: "uri", "x-vendor": true },
              n: { $ref: "#/$defs/n" },
            },
            $defs: { n: { type: "number" } },
          }),
        ])
        .get("mcp"),
    );
    expect(check({ url: "not a uri", n: 1 })).toEqual([]);
    expect(check({ url: "x", n: "1" })).toEqual([{ path: "n", message: "must be a number" }]);
  });

  describe("lenient to read (docs/security.md): what strict mode sends as null and other models leave out mean the same", () => {
    const strictForm = tool("strict", {
      type: "object",
      properties: {
        path: { type: "string" },
        startLine: { type: ["integer", "null"] },
        mode: { enum: ["a", "b", null] },
        where: {
          type: "object",
          properties: { glob: { anyOf: [{ type: "string" }, { type: "null" }] } },
          required: ["glob"],
          additionalProperties: false,
        },
      },
      required: ["path", "startLine", "mode", "where"],
      additionalProperties: false,
    });
    const plain = tool("plain", {
      type: "object",
      properties: {
        query: { type: "string" },
        limit: { type: "integer" },
        scope: { type: "array", items: { type: "object", properties: { key: { type: "string" } } } },
      },
      required: ["query"],
      additionalProperties: false,
    });
    const checks = new ArgumentsSchemas().of([strictForm, plain]);

    it("reads an omitted property a strict schema requires but allows to be null as null, nested ones too", () => {
      const read = checks.get("strict")?.({ path: "a.ts", where: {} });
      expect(read).toEqual({
        args: { path: "a.ts", startLine: null, mode: null, where: { glob: null } },
        problems: [],
      });
    });

    it("reads null for an optional property that may not be null as left out, in array items too", () => {
      const given = { query: "q", limit: null, scope: [{ key: null }, { key: "k" }] };
      expect(checks.get("plain")?.(given)).toEqual({
        args: { query: "q", scope: [{}, { key: "k" }] },
        problems: [],
      });
      expect(given).toEqual({ query: "q", limit: null, scope: [{ key: null }, { key: "k" }] });
    });

    it("hands back the very object given when reading changes nothing", () => {
      const given = { query: "q", limit: 3 };
      expect(checks.get("plain")?.(given).args).toBe(given);
    });

    it("still refuses what no reading can mend: a missing property that may not be null, a null that is required", () => {
      expect(checks.get("strict")?.({ startLine: 1, mode: "a", where: { glob: "*" } }).problems).toEqual([
        { path: "path", message: "is required" },
      ]);
      expect(checks.get("plain")?.({ query: null }).problems).toEqual([
        { path: "query", message: "must be a string" },
      ]);
    });
  });
});
