import { describe, expect, it } from "vitest";
import { type ToolDefinition, WireTools } from "../../src/index.js";

const readFile: ToolDefinition = {
  name: "read_file",
  description: "Reads a file.",
  parameters: { type: "object" },
};
const lookup: ToolDefinition = { name: "lookup", description: "Looks up.", parameters: { type: "object" } };

describe("a provider adapter's wire tools (LLM Call layer)", () => {
  it("converts a catalog array once, and another array anew", () => {
    const converted: string[] = [];
    const wire = new WireTools((tool) => {
      converted.push(tool.name);
      return { wireName: tool.name };
    });
    const catalog = [readFile, lookup];
    const first = wire.of(catalog);
    expect(first).toStrictEqual([{ wireName: "read_file" }, { wireName: "lookup" }]);
    expect(wire.of(catalog)).toBe(first);
    expect(converted).toStrictEqual(["read_file", "lookup"]);

    const other = wire.of([readFile, lookup]);
    expect(other).not.toBe(first);
    expect(other).toStrictEqual(first);
    expect(converted).toHaveLength(4);
  });
});
