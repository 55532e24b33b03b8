import { describe, expect, it } from "vitest";
import { comparableName } from "../src/workspace/comparable-name.js";
import { isGitignoreName, isGitName } from "../src/workspace/git-name.js";

describe("comparableName: a name as the file systems compare it", () => {
  it.each([
    [".git", ".git"],
    [".GIT", ".git"],
    [".git. . ", ".git"],
    [".git::$INDEX_ALLOCATION", ".git"],
    [".git:stream:$DATA", ".git"],
    [".g\u200cit", ".git"],
    ["\ufeff.\u200dG\u200eI\u200fT\u202a\u202e\u206a\u206f", ".git"],
    [".VSCode.", ".vscode"],
    ["notes.txt", "notes.txt"],
    // Not ignored by HFS+: a zero-width space and a word joiner are characters of the name.
    [".g\u200bit", ".g\u200bit"],
    [".g\u2060it", ".g\u2060it"],
  ])("%j compares as %j", (name, compared) => {
    expect(comparableName(name)).toBe(compared);
  });
});

describe("isGitName", () => {
  it.each([
    ".git",
    ".Git",
    ".git.",
    ".git ",
    ".git::$INDEX_ALLOCATION",
    ".git:x",
    ".g\u200cit",
    ".gi\ufefft",
    "\u202e.git",
    "git~1",
    "GIT~1",
    "GIT~2",
    "GIT~1::$INDEX_ALLOCATION",
    "a\\.git",
  ])("takes %j for .git", (name) => {
    expect(isGitName(name)).toBe(true);
  });

  it.each([
    ".github",
    ".gitignore",
    "git",
    ".gitx",
    "x.git",
    ".g\u200bit",
    "git~",
    "git~x",
    "gitt~1",
    "git~1a",
  ])("takes %j for another name", (name) => {
    expect(isGitName(name)).toBe(false);
  });
});

describe("isGitignoreName", () => {
  it.each([".gitignore", ".GitIgnore.", ".gitignore::$DATA", ".git\u200cignore", "GITIGN~1", "gi250a~3"])(
    "takes %j for .gitignore",
    (name) => {
      expect(isGitignoreName(name)).toBe(true);
    },
  );

  it.each([".gitignored", "gitignore", ".gitattributes", ".git"])("takes %j for another name", (name) => {
    expect(isGitignoreName(name)).toBe(false);
  });
});
