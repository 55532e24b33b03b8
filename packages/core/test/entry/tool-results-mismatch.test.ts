import type { ToolResult } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { toolResultsMismatch } from "../../src/entry/tool-results-mismatch.js";

const result = (toolCallId: string): ToolResult => ({ toolCallId, executionMs: 1, resultJson: "{}" });

describe("toolResultsMismatch (AGN-033 §3.3)", () => {
  it("answers undefined when the results answer the calls exactly", () => {
    expect(toolResultsMismatch(["c1"], [result("c1")])).toBeUndefined();
    expect(
      toolResultsMismatch(
        ["c1", "c2"],
        [result("c1"), { toolCallId: "c2", executionMs: 0, errorMessage: "denied" }],
      ),
    ).toBeUndefined();
  });

  it("names a count mismatch", () => {
    expect(toolResultsMismatch(["c1", "c2"], [result("c1")])).toBe(
      "expected 2 tool result(s) for c1, c2, received 1",
    );
    expect(toolResultsMismatch(["c1"], [result("c1"), result("c2")])).toBe(
      "expected 1 tool result(s) for c1, received 2",
    );
  });

  it("names the first result that answers an unknown or repeated id", () => {
    expect(toolResultsMismatch(["c1", "c2"], [result("c1"), result("cX")])).toBe(
      'toolResults[1] answers "cX", expected "c2"',
    );
    expect(toolResultsMismatch(["c1", "c2"], [result("c1"), result("c1")])).toBe(
      'toolResults[1] answers "c1", expected "c2"',
    );
  });

  it("names results in the wrong order", () => {
    expect(toolResultsMismatch(["c1", "c2", "c3"], [result("c1"), result("c3"), result("c2")])).toBe(
      "tool results are out of order: expected c1, c2, c3, received c1, c3, c2",
    );
  });
});
