import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { readLeniently } from "../../src/catalog/strict-parameters.js";
import { type ToolDefinition, wireParameters } from "../../src/index.js";

const tool = (parameters: Record<string, unknown>, strict?: boolean): ToolDefinition => ({
  name: "t",
  description: "t",
  parameters,
  ...(strict === undefined ? {} : { strict }),
});

/** What an MCP server typically declares: optional properties, annotations, a nested object in an array. */
const MCP_SCHEMA = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: {
    query: { type: "string", description: "what to find" },
    limit: { type: "integer", minimum: 1, default: 10 },
    kind: { type: "string", enum: ["issue", "pr"] },
    exact: { const: true },
    since: { type: "string", format: "date-time" },
    labels: {
      type: "array",
      items: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    },
  },
  required: ["query"],
};

describe("wireParameters: strict to send (docs/security.md)", () => {
  it("sends a tool that names its strictness as it is", () => {
    const strictForm = { type: "object", properties: {}, required: [], additionalProperties: false };
    expect(wireParameters(tool(strictForm, true))).toEqual({ parameters: strictForm, strict: true });
    expect(wireParameters(tool(MCP_SCHEMA, false))).toEqual({ parameters: MCP_SCHEMA, strict: false });
  });

  it("rewrites any other schema in strict form: every property required, the optional ones nullable, no others", () => {
    expect(wireParameters(tool(MCP_SCHEMA))).toEqual({
      strict: true,
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", description: "what to find" },
          limit: { type: ["integer", "null"], minimum: 1 },
          kind: { type: ["string", "null"], enum: ["issue", "pr", null] },
          exact: { anyOf: [{ const: true }, { type: "null" }] },
          since: { type: ["string", "null"], format: "date-time" },
          labels: {
            type: ["array", "null"],
            items: {
              type: "object",
              properties: { name: { type: "string" } },
              required: ["name"],
              additionalProperties: false,
            },
          },
        },
        required: ["query", "limit", "kind", "exact", "since", "labels"],
        additionalProperties: false,
      },
    });
  });

  it.each([
    [
      "a $ref",
      { type: "object", properties: { n: { $ref: "#/$defs/n" } }, $defs: { n: { type: "number" } } },
    ],
    ["allOf", { type: "object", properties: { n: { allOf: [{ type: "number" }] } } }],
    ["an object open to other properties", { type: "object", properties: {}, additionalProperties: true }],
    ["an object without properties", { type: "object", properties: { o: { type: "object" } } }],
    ["a property of any type", { type: "object", properties: { v: { description: "anything" } } }],
    [
      "a format strict mode does not know",
      { type: "object", properties: { u: { type: "string", format: "uri" } } },
    ],
    ["a root that is no object", { type: "string" }],
  ])("sends a schema with %s as it is, not strict", (_, parameters) => {
    expect(wireParameters(tool(parameters))).toEqual({ parameters, strict: false });
  });

  it("reads what a strict model sends for the rewritten schema as the original schema means it", () => {
    const { parameters } = wireParameters(tool(MCP_SCHEMA));
    const strictCall = {
      query: "q",
      limit: null,
      kind: "pr",
      exact: null,
      since: null,
      labels: [{ name: "x" }],
    };
    expect(new Ajv({ strict: false, validateFormats: false }).validate(parameters, strictCall)).toBe(true);
    const read = readLeniently(MCP_SCHEMA, strictCall);
    expect(read).toEqual({ query: "q", kind: "pr", labels: [{ name: "x" }] });
    expect(new Ajv({ strict: false, validateFormats: false }).validate(MCP_SCHEMA, read)).toBe(true);
  });
});
