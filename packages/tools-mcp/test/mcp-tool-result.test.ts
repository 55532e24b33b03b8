import { createHash } from "node:crypto";
import type { ServerToolFiles } from "@aptix/core";
import type { KeptFile, ProducedFile } from "@aptix/core/testing";
import { describe, expect, it } from "vitest";
import { mcpToolResult } from "../src/index.js";

/** Keeps files in a list, minting ids and urls the way the service's file keeper does. */
function keptFiles(maxBytes = 1_000): ServerToolFiles & { kept: ProducedFile[] } {
  const kept: ProducedFile[] = [];
  return {
    kept,
    maxBytes,
    async keep(file): Promise<KeptFile> {
      kept.push(file);
      const fileId = `file_${kept.length}`;
      return {
        fileId,
        ref: {
          name: file.name,
          mimeType: file.mimeType,
          url: `https://agent.example/v1/files/${fileId}`,
          sizeBytes: file.content.byteLength,
          contentHash: `sha256:${createHash("sha256").update(file.content).digest("hex")}`,
        },
      };
    },
  };
}

const text = (value: string) => ({ type: "text" as const, text: value });

describe("mcpToolResult (docs/server-tools.md)", () => {
  it("answers the text content as the output, joined by newlines", async () => {
    expect(await mcpToolResult({ content: [text("one"), text("two")] }, keptFiles())).toEqual({
      result: "one\ntwo",
    });
  });

  it("answers an isError result as the error message the model sees", async () => {
    expect(await mcpToolResult({ content: [text("no such file")], isError: true }, keptFiles())).toEqual({
      errorMessage: "no such file",
    });
    expect(await mcpToolResult({ content: [], isError: true }, keptFiles())).toEqual({
      errorMessage: "The tool reported an error without a message.",
    });
  });

  it("keeps embedded resources and images as files and mentions them in the output", async () => {
    const files = keptFiles();
    const answered = await mcpToolResult(
      {
        content: [
          text("Here they are."),
          {
            type: "resource",
            resource: { uri: "file:///repo/docs/read%20me.md", mimeType: "text/markdown", text: "# Hi" },
          },
          {
            type: "resource",
            resource: { uri: "mem://blob/", blob: Buffer.from([1, 2, 3]).toString("base64") },
          },
          { type: "image", mimeType: "image/png", data: Buffer.from([137, 80]).toString("base64") },
        ],
      },
      files,
    );
    expect(files.kept.map((file) => [file.name, file.mimeType, Array.from(file.content)])).toEqual([
      ["read me.md", "text/markdown", Array.from(new TextEncoder().encode("# Hi"))],
      ["resource-1", "application/octet-stream", [1, 2, 3]],
      ["image-2.png", "image/png", [137, 80]],
    ]);
    expect(answered).toEqual({
      result: {
        text: "Here they are.",
        files: [
          {
            fileId: "file_1",
            name: "read me.md",
            mimeType: "text/markdown",
            url: "https://agent.example/v1/files/file_1",
          },
          {
            fileId: "file_2",
            name: "resource-1",
            mimeType: "application/octet-stream",
            url: "https://agent.example/v1/files/file_2",
          },
          {
            fileId: "file_3",
            name: "image-2.png",
            mimeType: "image/png",
            url: "https://agent.example/v1/files/file_3",
          },
        ],
      },
    });
  });

  it("does not keep content over files.maxBytes and says so in the output", async () => {
    const files = keptFiles(2);
    const answered = await mcpToolResult(
      { content: [{ type: "resource", resource: { uri: "file:///big.txt", text: "too big" } }] },
      files,
    );
    expect(files.kept).toEqual([]);
    expect(answered).toEqual({ result: "[big.txt: 7 bytes, over the 2-byte file limit; not kept]" });
  });

  it("mentions resource links as text, and answers structured content when there is no text", async () => {
    expect(
      await mcpToolResult(
        { content: [{ type: "resource_link", uri: "file:///a.ts", name: "a.ts" }] },
        keptFiles(),
      ),
    ).toEqual({ result: "Resource a.ts: file:///a.ts" });
    expect(await mcpToolResult({ content: [], structuredContent: { count: 2 } }, keptFiles())).toEqual({
      result: { count: 2 },
    });
  });
});
