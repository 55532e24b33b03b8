import { describe, expect, it } from "vitest";
import type { ToolDefinition } from "../../src/index.js";
import { ArgumentsSchemas } from "../../src/server-tools/arguments-schemas.js";

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
    const check = new ArgumentsSchemas().of([edits]).get("edit");
    expect(check?.({ files: [{ name: "a" }, { name: 3, mode: "move", "a/b~c": 1 }, {}], limit: 0 })).toEqual([
      { path: "files[1].name", message: "must be a string" },
      { path: "files[1].mode", message: 'must be one of "add", "drop"' },
      { path: "limit", message: "must be >= 1" },
      { path: "files[2].name", message: "is required" },
      { path: "files[1].a/b~c", message: "is not allowed" },
    ]);
    expect(check?.({ files: [], limit: "x" })).toEqual([
      { path: "limit", message: "must be an integer or null" },
    ]);
    expect(check?.({ files: [{ name: "a", mode: "add" }], limit: null })).toEqual([]);
  });

  it("answers a problem for every call of a tool whose schema cannot be compiled", () => {
    const check = new ArgumentsSchemas().of([tool("bad", { type: "strin" })]).get("bad");
    expect(check?.({})).toEqual([
      { path: "", message: "cannot be checked: the tool's parameters are not a usable JSON Schema" },
    ]);
  });

  it("ignores keywords it does not know and formats, as the MCP SDK does, and reads 2020-12 schemas", () => {
    const check = new ArgumentsSchemas()
      .of([
        tool("mcp", {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties: { url: { type: "string", format: "uri", "x-vendor": true }, n: { $ref: "#/$defs/n" } },
          $defs: { n: { type: "number" } },
        }),
      ])
      .get("mcp");
    expect(check?.({ url: "not a uri", n: 1 })).toEqual([]);
    expect(check?.({ url: "x", n: "1" })).toEqual([{ path: "n", message: "must be a number" }]);
  });
});
