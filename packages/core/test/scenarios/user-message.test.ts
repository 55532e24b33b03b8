import { describe, expect, it } from "vitest";
import type { FixedContextChunk } from "../../src/in-memory/in-memory-context-retriever.js";
import type { ContentPart, LlmRequest } from "../../src/index.js";
import { createTestAgent, responseOf } from "../support/test-agent.js";

const chunks: FixedContextChunk[] = [
  {
    chunkId: "chunk_manager",
    path: "Billing/Managers/InvoiceManager.cs",
    startLine: 40,
    endLine: 85,
    language: "csharp",
    text: "public class InvoiceManager\n{\n}",
    metadata: { repo: "billing", language: "csharp" },
  },
  {
    chunkId: "chunk_web",
    path: "web/invoice.ts",
    startLine: 1,
    endLine: 3,
    language: "typescript",
    text: "export const invoice = 1;",
    metadata: { repo: "web", language: "typescript" },
  },
  {
    chunkId: "chunk_controller",
    path: "Billing/Api/InvoiceController.cs",
    startLine: 10,
    endLine: 55,
    language: "csharp",
    text: "// uses ``` in a comment\npublic class InvoiceController {}",
    metadata: { repo: "billing", language: "csharp" },
  },
];

/** The content of the user message a request sends last. */
function userContent(request: LlmRequest | undefined): ContentPart[] {
  const message = request?.input.findLast((item) => item.type === "user_message");
  if (message?.type !== "user_message") throw new Error("the request has no user message");
  return message.content;
}

describe("the user message through execute", () => {
  it("sends [MODE]/[INSTRUCTION] first and the retrieved chunks as the [CONTEXT] block, byte for byte", async () => {
    const agent = await createTestAgent({ chunks });
    agent.provider.enqueue({ text: "It bills." });
    responseOf(
      await agent.execute({
        sessionId: "s1",
        turnId: "t1",
        instruction: "How does billing work?",
        workspaceId: "ws",
      }),
    );
    expect(userContent(agent.provider.requests[0])).toEqual([
      { type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nHow does billing work?" },
      {
        type: "text",
        text: [
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
          "}",
          "```",
          "",
          "=== CHUNK 2 ===",
          "Id: ctx_2",
          "Path: web/invoice.ts",
          "Lines: 1-3",
          "Language: typescript",
          "```typescript",
          "export const invoice = 1;",
          "```",
          "",
          "=== CHUNK 3 ===",
          "Id: ctx_3",
          "Path: Billing/Api/InvoiceController.cs",
          "Lines: 10-55",
          "Language: csharp",
          "````csharp",
          "// uses ``` in a comment",
          "public class InvoiceController {}",
          "````",
        ].join("\n"),
      },
    ]);
  });

  it("hands the request's workspace, query, ragScope and hints to the retriever, which filters the chunks", async () => {
    const agent = await createTestAgent({ chunks });
    const retrieve = agent.retriever.retrieve.bind(agent.retriever);
    const scopes: unknown[] = [];
    agent.retriever.retrieve = async (query) => {
      scopes.push({ principal: query.principal, workspaceId: query.workspaceId, scope: query.scope });
      return retrieve(query);
    };
    agent.provider.enqueue({ text: "C# only." }, { text: "Nothing." });
    responseOf(
      await agent.execute({
        sessionId: "s1",
        turnId: "t1",
        instruction: "Explain",
        workspaceId: "ws",
        ragScope: [
          { key: "repo", operator: "==", values: ["billing"] },
          { key: "language", operator: "does_not_contain", values: ["script"] },
        ],
      }),
    );
    responseOf(
      await agent.execute({
        sessionId: "s1",
        turnId: "t2",
        instruction: "Anything in docs?",
        ragScope: [{ key: "repo", operator: "==", values: ["docs"] }],
      }),
    );
    expect(scopes).toEqual([
      {
        principal: "alice",
        workspaceId: "ws",
        scope: [
          { key: "repo", operator: "==", values: ["billing"] },
          { key: "language", operator: "does_not_contain", values: ["script"] },
        ],
      },
      // The second turn names no workspace: it retrieves from the session's last one.
      { principal: "alice", workspaceId: "ws", scope: [{ key: "repo", operator: "==", values: ["docs"] }] },
    ]);
    const first = userContent(agent.provider.requests[0]);
    expect(first).toHaveLength(2);
    const block = first[1]?.type === "text" ? first[1].text : "";
    expect(block.match(/=== CHUNK \d ===\nId: \w+/g)).toEqual([
      "=== CHUNK 1 ===\nId: ctx_1",
      "=== CHUNK 2 ===\nId: ctx_2",
    ]);
    // No chunk matched the second scope: the [CONTEXT] block is left out, not sent empty.
    expect(userContent(agent.provider.requests[1])).toEqual([
      { type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nAnything in docs?" },
    ]);
  });

  it("sends artifacts and images as further parts: utf8 fenced with path and origin, base64 images and files, clipboard images last", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "Seen." });
    responseOf(
      await agent.execute({
        sessionId: "s1",
        turnId: "t1",
        instruction: "Look at these",
        inputArtifacts: [
          {
            relativePath: "src/a.ts",
            fileName: "a.ts",
            contents: "export const a = 1;\n",
            origin: "ide",
            language: "typescript",
          },
          {
            relativePath: "diagram.png",
            fileName: "diagram.png",
            contents: "iVBORw0KGgo=",
            origin: "user",
            mimeType: "image/png",
            encoding: "base64",
          },
          {
            relativePath: "spec.pdf",
            fileName: "spec.pdf",
            contents: "JVBERi0=",
            origin: "user",
            mimeType: "application/pdf",
            encoding: "base64",
          },
        ],
        clipboardImages: [{ id: "clip-1", mimeType: "image/webp", dataBase64: "UklGRg==" }],
      }),
    );
    expect(userContent(agent.provider.requests[0])).toEqual([
      { type: "text", text: "[MODE: general]\n\n[INSTRUCTION]\nLook at these" },
      {
        type: "text",
        text: "[ARTIFACT]\nPath: src/a.ts\nOrigin: ide\n```typescript\nexport const a = 1;\n\n```",
      },
      { type: "image", mimeType: "image/png", dataBase64: "iVBORw0KGgo=" },
      { type: "file", fileName: "spec.pdf", mimeType: "application/pdf", dataBase64: "JVBERi0=" },
      { type: "image", mimeType: "image/webp", dataBase64: "UklGRg==" },
    ]);
  });

  it("latches the solution context: set, kept when omitted, replaced, and cleared by an empty string", async () => {
    const agent = await createTestAgent();
    agent.provider.enqueue({ text: "1" }, { text: "2" }, { text: "3" }, { text: "4" }, { text: "5" });
    const turn = async (turnId: string, solutionContextText?: string) =>
      responseOf(
        await agent.execute({
          sessionId: "s1",
          turnId,
          instruction: `turn ${turnId}`,
          ...(solutionContextText === undefined ? {} : { solutionContextText }),
        }),
      );
    await turn("t1", "Solution A");
    await turn("t2");
    await turn("t3", "Solution B");
    await turn("t4", "");
    await turn("t5");
    const solutionParts = agent.provider.requests.map((request) =>
      userContent(request)
        .slice(1)
        .map((part) => (part.type === "text" ? part.text : part.type)),
    );
    expect(solutionParts).toEqual([
      ["[SOLUTION CONTEXT]\nSolution A"],
      ["[SOLUTION CONTEXT]\nSolution A"],
      ["[SOLUTION CONTEXT]\nSolution B"],
      [],
      [],
    ]);
  });

  it("sends the solution context after the [CONTEXT] block", async () => {
    const agent = await createTestAgent({ chunks: chunks.slice(1, 2) });
    agent.provider.enqueue({ text: "ok" });
    responseOf(
      await agent.execute({
        sessionId: "s1",
        turnId: "t1",
        instruction: "Go",
        workspaceId: "ws",
        solutionContextText: "Web.sln",
      }),
    );
    const parts = userContent(agent.provider.requests[0]).map((part) =>
      part.type === "text" ? part.text.split("\n")[0] : part.type,
    );
    expect(parts).toEqual(["[MODE: general]", "[CONTEXT]", "[SOLUTION CONTEXT]"]);
  });
});
