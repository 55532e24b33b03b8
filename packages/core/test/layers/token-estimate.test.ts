import { countTokens } from "gpt-tokenizer";
import { describe, expect, it } from "vitest";
import { estimateTokens, startWithinTokens } from "../../src/composition/token-estimate.js";

/**
 * Token estimates of untrusted text: a client's tool output or a model's may be 262,144 characters of one letter,
 * which whole-text BPE takes a minute to count. Counted in slices, it costs what its length costs.
 */
const PROSE = Array.from({ length: 400 }, (_, i) => `Line ${i}: the cart total adds each price once.`).join(
  "\n",
);

describe("estimateTokens", () => {
  it("is the exact count for a short text", () => {
    for (const text of ["", "hello", "export const a = 1;", "x".repeat(512)])
      expect(estimateTokens(text)).toBe(countTokens(text));
  });

  it("is at most one token a slice over the exact count for a long text, never under it", () => {
    const exact = countTokens(PROSE);
    const estimate = estimateTokens(PROSE);
    expect(estimate).toBeGreaterThanOrEqual(exact);
    expect(estimate - exact).toBeLessThanOrEqual(Math.ceil(PROSE.length / 512));
  });

  it("counts a run of one letter the service accepts as a tool output, and cuts it to a budget", () => {
    const run = "e".repeat(262_144);
    const tokens = estimateTokens(run);
    expect(tokens).toBeGreaterThan(0);
    const start = startWithinTokens(run, 1_000);
    expect(estimateTokens(start)).toBeLessThanOrEqual(1_000);
    expect(start.length).toBeGreaterThan(0);
  });

  it("never cuts between the halves of a surrogate pair", () => {
    const text = `${"a".repeat(511)}😀${"b".repeat(600)}`;
    const start = startWithinTokens(text, estimateTokens(text) - 1);
    expect(start.at(-1)).not.toMatch(/[\uD800-\uDBFF]/);
    expect(estimateTokens(text)).toBeGreaterThan(0);
  });
});
