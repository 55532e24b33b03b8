import { readFileSync } from "node:fs";
import type { FinalResponse } from "@aptix/contracts";
import { step } from "@aptix/testing-llm-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as client from "../src/index.js";
import { AptixClient } from "../src/index.js";
import { ask } from "./readme/ask.js";
import { downloadFiles } from "./readme/download-files.js";
import { explainFailure } from "./readme/explain-failure.js";
import { runWithTools } from "./readme/run-with-tools.js";
import { streamAnswer } from "./readme/stream-answer.js";
import { API_KEY, type LiveServer, startLiveServer, uniqueId } from "./support/live-server.js";

/**
 * The README is checked against the code: each TypeScript block is a copy of a file under test/readme/, which
 * the typecheck compiles and the tests below run against the real server.
 */
const packageDir = new URL("../", import.meta.url);
const README = readFileSync(new URL("README.md", packageDir), "utf8");

/** The fenced blocks: language, body, and the `<!-- … -->` marker on the line before the fence, if any. */
const blocks = [...README.matchAll(/(?:<!-- (.+) -->\n)?```(\w*)\n([\s\S]*?)\n```/g)].map((match) => ({
  marker: match[1],
  language: match[2] ?? "",
  body: match[3] ?? "",
  line: README.slice(0, match.index).split("\n").length,
}));
const snippets = blocks.flatMap((block) => {
  const file = /^snippet: (.+)$/.exec(block.marker ?? "")?.[1];
  return file === undefined ? [] : [{ ...block, file }];
});

describe("README code blocks", () => {
  it("every TypeScript block is a snippet file; the others are shell", () => {
    for (const block of blocks) {
      const where = `README.md:${block.line}`;
      if (block.language === "ts") expect(block.marker, where).toMatch(/^snippet: /);
      else expect(block.language, where).toBe("sh");
    }
    expect(snippets.length).toBe(6);
  });

  it.each(snippets.map((block) => [block.file, block] as const))("%s is copied verbatim", (file, block) => {
    const source = readFileSync(new URL(file, packageDir), "utf8");
    expect(`${block.body}\n`, `README.md:${block.line} differs from ${file}: copy the file in`).toBe(source);
  });

  it("the exports table and the types paragraph list what the package exports", () => {
    const names = (text: string) => [...text.matchAll(/`(\w+)`/g)].map((match) => match[1]);
    const table = README.split("\n").filter((line) => /^\| `\w+` \|/.test(line));
    expect(table.flatMap((line) => names(line.split("|")[1] ?? "")).sort()).toEqual(
      Object.keys(client).sort(),
    );
    const index = readFileSync(new URL("src/index.ts", packageDir), "utf8");
    // A list of type exports may span lines.
    const types = [...index.matchAll(/\btype (\w+)|export type \{([\w,\s]+)\}/g)].flatMap((match) =>
      (match[1] ?? match[2] ?? "").split(/[,\s]+/).filter((name) => name !== ""),
    );
    const paragraph = /^Types: ([\s\S]+?)\.$/m.exec(README)?.[1] ?? "";
    expect(names(paragraph).sort()).toEqual([...new Set(types)].sort());
  });
});

describe("README examples against the real server", () => {
  let server: LiveServer;
  beforeAll(async () => {
    server = await startLiveServer();
  });
  afterAll(async () => {
    await server?.close();
  });
  const aptix = () => new AptixClient({ baseUrl: server.url, apiKey: API_KEY });

  it("ask returns the answer's text, and throws a failure with its code", async () => {
    server.openai.script(step.text("The answer is 42."));
    expect(await ask(server.url, API_KEY, uniqueId("readme"), "What is the answer?")).toBe(
      "The answer is 42.",
    );
    await expect(ask(server.url, "wrong-key", uniqueId("readme"), "Hello")).rejects.toThrow(
      /^UNAUTHORIZED: /,
    );
  });

  it("streamAnswer shows the text as it grows and returns the result", async () => {
    server.openai.script(step.text(["Growing ", "text."]));
    const shown: string[] = [];
    const answer = await streamAnswer(aptix(), uniqueId("readme"), "Grow", (text) => shown.push(text));
    expect(shown).toEqual(["Growing ", "Growing text."]);
    expect(answer).toMatchObject({ successful: true, result: { primaryOutputText: "Growing text." } });
  });

  it("runWithTools reads from the workspace, refuses the patch, and returns the final answer", async () => {
    server.openai.script(
      step.reply({
        text: "Reading first.",
        functionCalls: [
          {
            name: "read_file",
            arguments: { path: "src/app.ts", startLine: null, endLine: null },
            callId: "call_read",
          },
          {
            name: "read_file",
            arguments: { path: "missing.ts", startLine: null, endLine: null },
            callId: "call_missing",
          },
          { name: "apply_patch", arguments: { patch: "--- a/src/app.ts" }, callId: "call_patch" },
        ],
      }),
      step.text(["`app` is ", "exported."]),
    );
    const shown: string[] = [];
    const final = await runWithTools(
      aptix(),
      uniqueId("readme"),
      "What does src/app.ts export?",
      new Map([["src/app.ts", "export const app = 1;"]]),
      (text) => shown.push(text),
    );
    expect(final.primaryOutputText).toBe("`app` is exported.");
    expect(shown.at(-1)).toBe("`app` is exported.");
    const outputs = (server.openai.responseRequests().at(-1)?.body as { input?: unknown } | undefined)
      ?.input as Array<{
      type: string;
      call_id: string;
      output: string;
    }>;
    expect(
      outputs.filter((item) => item.type === "function_call_output").map((item) => item.call_id),
    ).toEqual(["call_read", "call_missing", "call_patch"]);
    expect(JSON.stringify(outputs)).toContain("missing.ts does not exist");
    expect(JSON.stringify(outputs)).toContain("This workspace is read-only.");
  });

  it("explainFailure handles known codes, unknown codes and successes", async () => {
    const answer = await aptix().execute({ sessionId: "readme", turnId: "t1", tools: [] } as never);
    expect(explainFailure(answer)).toMatch(/^The request was refused: /);
    expect(
      explainFailure({
        successful: false,
        errors: [{ code: "QUOTA_EXCEEDED", message: "Out of quota." }],
        warnings: [],
      }),
    ).toBe("QUOTA_EXCEEDED: Out of quota.");
    expect(explainFailure({ successful: true, result: 1, errors: [], warnings: [] })).toBeUndefined();
  });

  it("downloadFiles fetches each produced file", async () => {
    const text = "--- a/app.ts\n+++ b/app.ts\n";
    const sizeBytes = await server.putFile({
      fileId: "file_readme",
      name: "app.patch",
      mimeType: "text/x-diff",
      text,
    });
    const answer: FinalResponse = {
      kind: "final",
      sessionId: "s",
      turnId: "t",
      modeDisplayName: "General",
      primaryOutputText: "Here is the patch.",
      files: [
        {
          name: "app.patch",
          mimeType: "text/x-diff",
          url: "https://aptix.example.com/v1/files/file_readme",
          sizeBytes,
          contentHash: `sha256:${"0".repeat(64)}`,
        },
      ],
    };
    expect(await downloadFiles(aptix(), answer)).toEqual(
      new Map([["app.patch", "--- a/app.ts\n+++ b/app.ts\n"]]),
    );
  });
});
