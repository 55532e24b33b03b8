import { describe, expect, it } from "vitest";
import { ApprovalCall } from "../src/tools/approval-call.js";

const WORKSPACE = "/home/ada/shop";
const call = (args: unknown, workspaces = [WORKSPACE]) =>
  new ApprovalCall("make_file", JSON.stringify(args), workspaces, "/home/ada");

describe("ApprovalCall: what the user is asked about", () => {
  it("shows every argument, names sorted whatever order the model sent them in, nested keys sorted too", () => {
    expect(
      call({ name: "a.txt", content: "hi", options: { z: 1, a: [{ y: 2, b: 3 }] }, extra: null }).arguments,
    ).toEqual([
      { name: "content", value: '"hi"' },
      { name: "extra", value: "null" },
      { name: "name", value: '"a.txt"' },
      { name: "options", value: '{"a":[{"b":3,"y":2}],"z":1}' },
    ]);
  });

  it("cuts each long value on its own, saying its full length, and shows the arguments after it whole", () => {
    const shown = call({
      content: `${"x".repeat(4_999)}😀`,
      description: "the end",
      list: Array(100).fill(1),
    }).arguments;
    expect(shown[0]?.value).toBe(`"${"x".repeat(199)}… (5000 characters)`);
    expect(shown[1]).toEqual({ name: "description", value: '"the end"' });
    expect(shown[2]?.value).toBe(`[${"1,".repeat(99)}1… (201 characters of JSON)`);
  });

  it("never cuts between the halves of a surrogate pair", () => {
    const [content] = call({ content: "😀".repeat(300) }).arguments;
    expect(content?.value).toBe(`"${"😀".repeat(199)}… (300 characters)`);
  });

  it("shows arguments that are not a JSON object as they came", () => {
    expect(new ApprovalCall("t", "[1,2]", [WORKSPACE], undefined).arguments).toEqual([
      { name: "arguments", value: '"[1,2]"' },
    ]);
  });
});

describe("ApprovalCall: what an earlier always covers", () => {
  it("is the tool with the same argument names, whatever their values or order", () => {
    const first = call({ name: "a.txt", content: "hi" });
    expect(call({ content: "other", name: "b.txt" }).alwaysKey).toBe(first.alwaysKey);
    expect(call({ name: "a.txt", content: "hi", mode: "0755" }).alwaysKey).not.toBe(first.alwaysKey);
    expect(call({ name: "a.txt" }).alwaysKey).not.toBe(first.alwaysKey);
    expect(
      new ApprovalCall("other_tool", '{"name":"a.txt","content":"hi"}', [WORKSPACE], undefined).alwaysKey,
    ).not.toBe(first.alwaysKey);
  });

  it.each([
    ["/etc/passwd"],
    ["/home/ada/shopping/list.txt"],
    ["../outside.txt"],
    ["src/../../outside.txt"],
    ["..\\outside.txt"],
    ["~/.bashrc"],
    ["~root/.bashrc"],
    ["file:///etc/hosts"],
    ["file://server/share/x"],
    ["C:\\Windows\\System32"],
    ["\\\\server\\share"],
  ])("names %j a path outside the workspace", (path) => {
    expect(call({ name: "x", nested: { paths: [path] } }).outsidePaths).toEqual([path]);
  });

  it.each([
    ["src/app.ts"],
    ["./notes.md"],
    ["src/../README.md"],
    ["/home/ada/shop/src/app.ts"],
    ["~/shop/src/app.ts"],
    ["file:///home/ada/shop/a.txt"],
    ["a line\n/etc/passwd in a file's content"],
    ["https://example.com/../x"],
  ])("takes %j for inside the workspace, or no path", (text) => {
    expect(call({ name: text }).outsidePaths).toEqual([]);
  });

  it("says how many paths are outside, naming them", () => {
    expect(call({ name: "/etc/a" }).outside).toBe("a path outside the workspace (/etc/a)");
    expect(call({ name: "/etc/a", to: "../b" }).outside).toBe("paths outside the workspace (/etc/a, ../b)");
  });

  it("takes a path inside any of the workspace's folders (as given, or its real path) for inside", () => {
    expect(call({ name: "/private/shop/a.txt" }, [WORKSPACE, "/private/shop"]).outsidePaths).toEqual([]);
  });
});
