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

  it.each([
    ["\u200b", "zero-width space"],
    ["\u200c", "zero-width non-joiner"],
    ["\u200d", "zero-width joiner"],
    ["\u200e", "left-to-right mark"],
    ["\u200f", "right-to-left mark"],
    ["\u202a", "left-to-right embedding"],
    ["\u202b", "right-to-left embedding"],
    ["\u202c", "pop directional formatting"],
    ["\u202d", "left-to-right override"],
    ["\u202e", "right-to-left override"],
    ["\u2066", "left-to-right isolate"],
    ["\u2067", "right-to-left isolate"],
    ["\u2068", "first strong isolate"],
    ["\u2069", "pop directional isolate"],
    ["\ufeff", "zero-width no-break space (BOM)"],
    ["\u061c", "Arabic letter mark"],
    ["\u2060", "word joiner"],
    ["\u2064", "invisible plus"],
    ["\u206a", "inhibit symmetric swapping"],
    ["\u206f", "nominal digit shapes"],
    ["\u034f", "combining grapheme joiner"],
    ["\u180e", "Mongolian vowel separator"],
    ["\u2028", "line separator"],
    ["\u2029", "paragraph separator"],
    ["\u3164", "Hangul filler"],
    ["\ufe00", "variation selector-1"],
    ["\ufe0f", "variation selector-16"],
  ])("shows %j (%s) as its escape", (char) => {
    const code = char.charCodeAt(0).toString(16).padStart(4, "0");
    expect(visible(`if (admin)${char} return;`)).toBe(`if (admin)\\u${code} return;`);
  });

  it("shows the soft hyphen, which prints nothing inside a word, as its escape", () => {
    expect(visible("ad\u00admin")).toBe("ad\\xadmin");
  });

  it("shows the supplementary variation selectors, which ride unseen on a character, as escapes", () => {
    expect(visible("a\u{e0100}b\u{e01ef}c")).toBe("a\\u{e0100}b\\u{e01ef}c");
    expect(visible("\u{e00ff}\u{e01f0}")).toBe("\u{e00ff}\u{e01f0}");
  });

  it("shows the invisible tag characters, which spell ASCII unseen, as escapes, and keeps what is around them", () => {
    const hidden = [..."rm -rf"].map((char) => String.fromCodePoint(0xe0000 + char.charCodeAt(0))).join("");
    expect(visible(`ok${hidden}!`)).toBe("ok\\u{e0072}\\u{e006d}\\u{e0020}\\u{e002d}\\u{e0072}\\u{e0066}!");
    expect(visible("\u{e0000}\u{e007f}\u{e0080}")).toBe("\\u{e0000}\\u{e007f}\u{e0080}");
  });

  it("keeps the characters next to the ranges, and text in any script", () => {
    const kept =
      "\u00ac\u00ae\u034e\u0350\u1810\u200a\u2010\u2027\u202f\u2065\u2070\u3163\u3165\ufdfd\ufe10\ufefe\ufffd مرحبا שלום 😀";
    expect(visible(kept)).toBe(kept);
  });

  it("escapes in JSON what JSON.stringify leaves raw, and the JSON still parses to the same value", () => {
    const value = { text: "\u001b[2J\u007f\u009b\u202e\u200b\ufeff\u{e0041}\u2028\u00ad\u{e0100}" };
    const json = visibleJson(value);
    expect(json).toBe(
      '{"text":"\\u001b[2J\\u007f\\u009b\\u202e\\u200b\\ufeff\\udb40\\udc41\\u2028\\u00ad\\udb40\\udd00"}',
    );
    expect(JSON.parse(json)).toEqual(value);
  });
});
