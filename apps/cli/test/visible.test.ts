import { describe, expect, it } from "vitest";
import { visible, visibleJson } from "../src/terminal/visible.js";

describe("visible", () => {
  it("keeps text, newlines and tabs, and shows every other control character as its escape", () => {
    expect(visible("héllo\tworld\n日本")).toBe("héllo\tworld\n日本");
    expect(visible("\u001b[1A\u001b[2K")).toBe("\\x1b[1A\\x1b[2K");
    expect(visible("\u001b]0;title\u0007")).toBe("\\x1b]0;title\\x07");
    expect(visible("a\rb\u0000c\u007fd\u009b31m")).toBe("a\\x0db\\x00c\\x7fd\\x9b31m");
    expect(visible("abc\u202edcba\u2066")).toBe("abc\\u202edcba\\u2066");
  });

  it("escapes in JSON what JSON.stringify leaves raw, and the JSON still parses to the same value", () => {
    const value = { text: "\u001b[2J\u007f\u009b\u202e" };
    const json = visibleJson(value);
    expect(json).toBe('{"text":"\\u001b[2J\\u007f\\u009b\\u202e"}');
    expect(JSON.parse(json)).toEqual(value);
  });
});
