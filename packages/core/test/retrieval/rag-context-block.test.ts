import type { UserTurnRequest } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { composeUserMessage } from "../../src/composition/user-message.js";
import type { RagChunk } from "../../src/records/rag-chunk.js";
import { formatRagContextBlock } from "../../src/retrieval/rag-context-block.js";

const invoiceManager: RagChunk = {
  id: "ctx_1",
  path: "Billing/Managers/InvoiceManager.cs",
  startLine: 40,
  endLine: 85,
  language: "csharp",
  content: "public class InvoiceManager\n{\n    ...\n}",
};
const invoiceController: RagChunk = {
  id: "ctx_2",
  path: "Billing/Api/InvoiceController.cs",
  startLine: 10,
  endLine: 55,
  language: "csharp",
  content: '[ApiController]\n[Route("api/invoices")]\npublic class InvoiceController : ControllerBase\n{\n}',
};

describe("formatRagContextBlock (AGN-002)", () => {
  it("is undefined without chunks, so the block is omitted", () => {
    expect(formatRagContextBlock([])).toBeUndefined();
  });

  it("writes one chunk byte for byte", () => {
    expect(formatRagContextBlock([invoiceManager])).toBe(
      "[CONTEXT]\n\n=== CHUNK 1 ===\nId: ctx_1\nPath: Billing/Managers/InvoiceManager.cs\nLines: 40-85\nLanguage: csharp\n" +
        "```csharp\npublic class InvoiceManager\n{\n    ...\n}\n```",
    );
  });

  it("numbers chunks from 1 and separates them by one blank line", () => {
    expect(formatRagContextBlock([invoiceManager, invoiceController])).toBe(
      [
        "[CONTEXT]",
        "",
        "=== CHUNK 1 ===",
        "Id: ctx_1",
        "Path: Billing/Managers/InvoiceManager.cs",
        "Lines: 40-85",
        "Language: csharp",
        "```csharp",
        "public class InvoiceManager",
        "{",
        "    ...",
        "}",
        "```",
        "",
        "=== CHUNK 2 ===",
        "Id: ctx_2",
        "Path: Billing/Api/InvoiceController.cs",
        "Lines: 10-55",
        "Language: csharp",
        "```csharp",
        "[ApiController]",
        '[Route("api/invoices")]',
        "public class InvoiceController : ControllerBase",
        "{",
        "}",
        "```",
      ].join("\n"),
    );
  });

  it("uses a fence longer than any backtick run in the content", () => {
    const markdown: RagChunk = {
      id: "doc",
      path: "README.md",
      startLine: 1,
      endLine: 5,
      language: "markdown",
      content: "Run:\n```sh\npnpm test\n```",
    };
    expect(formatRagContextBlock([markdown])).toBe(
      "[CONTEXT]\n\n=== CHUNK 1 ===\nId: doc\nPath: README.md\nLines: 1-5\nLanguage: markdown\n" +
        "````markdown\nRun:\n```sh\npnpm test\n```\n````",
    );
    const deeper = formatRagContextBlock([{ ...markdown, content: "a ````` b" }]);
    expect(deeper?.endsWith("\n``````markdown\na ````` b\n``````")).toBe(true);
  });
});

function userTurn(fields: Partial<UserTurnRequest>): UserTurnRequest {
  return { sessionId: "s1", turnId: "t1", ...fields };
}

describe("composeUserMessage (AGN-003 §3)", () => {
  it("opens with the [MODE] and [INSTRUCTION] part and nothing else without context", () => {
    const message = composeUserMessage({
      modeId: "general",
      request: userTurn({ instruction: "Explain InvoiceManager." }),
      solutionContextText: null,
    });
    expect(message).toEqual({
      type: "user_message",
      content: [{ type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nExplain InvoiceManager." }],
    });
  });

  it("keeps the [INSTRUCTION] header when the turn has only artifacts", () => {
    const message = composeUserMessage({
      modeId: "review",
      request: userTurn({
        inputArtifacts: [{ relativePath: "a.txt", fileName: "a.txt", contents: "x", origin: "ide" }],
      }),
      solutionContextText: null,
    });
    expect(message.content[0]).toEqual({ type: "text", text: "[MODE: review]\n\n[INSTRUCTION]\n" });
  });

  it("puts every part in order: instruction, context, solution context, artifacts, clipboard images", () => {
    const message = composeUserMessage({
      modeId: "general",
      request: userTurn({
        instruction: "Review these.",
        inputArtifacts: [
          {
            relativePath: "src/app.ts",
            fileName: "app.ts",
            contents: "const a = 1;",
            origin: "ide",
            language: "typescript",
          },
          {
            relativePath: "notes/plan.md",
            fileName: "plan.md",
            contents: "use ```x``` here",
            origin: "user",
            encoding: "utf8",
          },
          {
            relativePath: "img/shot.png",
            fileName: "shot.png",
            contents: "iVBORw0KGgo=",
            origin: "user",
            mimeType: "image/png",
            encoding: "base64",
          },
          {
            relativePath: "docs/spec.pdf",
            fileName: "spec.pdf",
            contents: "JVBERi0xLjQ=",
            origin: "ide",
            mimeType: "application/pdf",
            encoding: "base64",
          },
          { relativePath: "bin/blob", fileName: "blob", contents: "AAEC", origin: "ide", encoding: "base64" },
        ],
        clipboardImages: [{ id: "img1", mimeType: "image/jpeg", dataBase64: "/9j/4AAQ" }],
      }),
      contextBlock: formatRagContextBlock([invoiceManager]),
      solutionContextText: "Solution: Billing.sln",
    });
    expect(message.content).toEqual([
      { type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nReview these." },
      {
        type: "text",
        text:
          "[CONTEXT]\n\n=== CHUNK 1 ===\nId: ctx_1\nPath: Billing/Managers/InvoiceManager.cs\nLines: 40-85\nLanguage: csharp\n" +
          "```csharp\npublic class InvoiceManager\n{\n    ...\n}\n```",
      },
      { type: "text", text: "[SOLUTION CONTEXT]\nSolution: Billing.sln" },
      { type: "text", text: "[ARTIFACT]\nPath: src/app.ts\nOrigin: ide\n```typescript\nconst a = 1;\n```" },
      { type: "text", text: "[ARTIFACT]\nPath: notes/plan.md\nOrigin: user\n````\nuse ```x``` here\n````" },
      { type: "image", mimeType: "image/png", dataBase64: "iVBORw0KGgo=" },
      { type: "file", fileName: "spec.pdf", mimeType: "application/pdf", dataBase64: "JVBERi0xLjQ=" },
      { type: "file", fileName: "blob", mimeType: "application/octet-stream", dataBase64: "AAEC" },
      { type: "image", mimeType: "image/jpeg", dataBase64: "/9j/4AAQ" },
    ]);
  });

  it("leaves the solution context part out when it is null or empty", () => {
    for (const solutionContextText of [null, ""]) {
      const message = composeUserMessage({
        modeId: "general",
        request: userTurn({ instruction: "Hi" }),
        solutionContextText,
      });
      expect(message.content).toHaveLength(1);
    }
  });
});
