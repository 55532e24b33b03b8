import { describe, expect, it } from "vitest";
import { defaultClientTools } from "../src/index.js";

describe("defaultClientTools", () => {
  it("are the four tools the aptix CLI runs, in the order they are offered", () => {
    expect(defaultClientTools.map((tool) => tool.name)).toEqual([
      "read_file",
      "list_files",
      "search_files",
      "apply_patch",
    ]);
  });

  it.each(defaultClientTools.map((tool) => [tool.name, tool] as const))(
    "%s has a schema OpenAI's strict mode accepts: every property required, no others allowed",
    (_name, tool) => {
      const parameters = tool.parameters as {
        type: string;
        properties: object;
        required: string[];
        additionalProperties: boolean;
      };
      expect(tool.strict).toBe(true);
      expect(parameters.type).toBe("object");
      expect(parameters.additionalProperties).toBe(false);
      expect([...parameters.required].sort()).toEqual(Object.keys(parameters.properties).sort());
      expect(tool.description.length).toBeGreaterThan(20);
    },
  );

  it("is a frozen list", () => {
    expect(Object.isFrozen(defaultClientTools)).toBe(true);
  });
});
