import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { codeSearchText } from "../../src/index.js";
import { codeQueryTerms } from "../../src/retrieval/code-search-text.js";

describe("codeSearchText", () => {
  it("lower-cases words and keeps them in order", () => {
    expect(codeSearchText("Open the Store now")).toBe("open the store now");
  });

  it("splits camelCase and PascalCase identifiers into their parts and keeps the whole", () => {
    expect(codeSearchText("getUserName")).toBe("getusername get user name");
    expect(codeSearchText("SessionStore")).toBe("sessionstore session store");
  });

  it("keeps acronyms together and splits them from the next word", () => {
    expect(codeSearchText("HTTPServer parseJSON")).toBe("httpserver http server parsejson parse json");
  });

  it("splits on underscores, dots and slashes", () => {
    expect(codeSearchText("foo_bar.baz/qux")).toBe("foobar foo bar baz qux");
    expect(codeSearchText("MAX_TERM_CHARS")).toBe("maxtermchars max term chars");
  });

  it("keeps letters and digits together unless the case changes after a digit", () => {
    expect(codeSearchText("sha256 utf8Decode v2Api")).toBe("sha256 utf8decode utf8 decode v2api v2 api");
  });

  it("treats punctuation, operators and whitespace as separators", () => {
    expect(codeSearchText("a->b, c::d (e) {f}; 'g' \"h\" `i` x-y")).toBe("a b c d e f g h i x y");
  });

  it("keeps letters beyond ASCII", () => {
    expect(codeSearchText("Größe naïveCafé")).toBe("größe naïvecafé naïve café");
  });

  it("drops underscores alone and terms longer than 64 characters", () => {
    expect(codeSearchText(`__ _private ${"a".repeat(65)} ok`)).toBe("private ok");
  });

  it("is empty for text without words", () => {
    expect(codeSearchText("  +-*/ {} ()\n")).toBe("");
  });

  it("answers only lower-case terms of letters, marks and digits, separated by single spaces", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), (text) => {
        const searchText = codeSearchText(text);
        if (searchText === "") return;
        for (const term of searchText.split(" ")) {
          expect(term).toMatch(/^[\p{L}\p{M}\p{N}]{1,64}$/u);
          expect(term).toBe(term.toLowerCase());
        }
      }),
    );
  });
});

describe("codeQueryTerms", () => {
  it("answers the distinct terms of a question without its common English words", () => {
    expect(codeQueryTerms("How does the session store claim a lease?")).toEqual([
      "session",
      "store",
      "claim",
      "lease",
    ]);
  });

  it("splits identifiers in a query as the search text does", () => {
    expect(codeQueryTerms("where is getUserName called")).toEqual([
      "getusername",
      "get",
      "user",
      "name",
      "called",
    ]);
  });

  it("keeps words that are code even when they read as English", () => {
    expect(codeQueryTerms("get new set")).toEqual(["get", "new", "set"]);
  });

  it("lists each term once, in order of first appearance", () => {
    expect(codeQueryTerms("user userName USER name")).toEqual(["user", "username", "name"]);
  });

  it("drops single characters", () => {
    expect(codeQueryTerms("x y z_index")).toEqual(["zindex", "index"]);
  });

  it("is empty when nothing is left to search for", () => {
    expect(codeQueryTerms("how is it? ...")).toEqual([]);
  });

  it("answers only terms that codeSearchText would index for the same words", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), (query) => {
        const indexed = new Set(codeSearchText(query).split(" "));
        for (const term of codeQueryTerms(query)) expect(indexed.has(term)).toBe(true);
      }),
    );
  });
});
