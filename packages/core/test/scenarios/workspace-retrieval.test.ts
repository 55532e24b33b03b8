import { fail, type WorkspaceDocument } from "@aptix/contracts";
import { countTokens } from "gpt-tokenizer";
import { describe, expect, it } from "vitest";
import type { AgentCatalogConfig } from "../../src/catalog/agent-catalog.js";
import { InMemoryWorkspaceIndex } from "../../src/in-memory/in-memory-workspace-index.js";
import { type LlmRequest, sha256ContentHashService, WorkspaceKnowledge } from "../../src/index.js";
import {
  createTestAgent,
  errorsOf,
  PRINCIPAL,
  responseOf,
  resultOf,
  TEST_CATALOG,
} from "../support/test-agent.js";

const invoiceManager: WorkspaceDocument = {
  path: "src/billing/InvoiceManager.cs",
  contents: [
    "namespace Billing;",
    "",
    "public class InvoiceManager",
    "{",
    "    // Totals use ``` fences in their docs",
    "    public decimal Total(Invoice invoice) => invoice.Lines.Sum(line => line.Amount);",
    "}",
  ].join("\n"),
};
const readme: WorkspaceDocument = {
  path: "docs/billing.md",
  contents: "# Billing\n\nEvery invoice has lines; the invoice total is their sum.",
};
const shipping: WorkspaceDocument = {
  path: "src/shipping/parcel.py",
  contents: "def ship_parcel(address):\n    return label_for(address)",
};

/** A test agent whose retriever is the real workspace knowledge over an in-memory index. */
async function agentWithKnowledge(config: AgentCatalogConfig = TEST_CATALOG) {
  let chunkIds = 0;
  const knowledge = new WorkspaceKnowledge({
    index: new InMemoryWorkspaceIndex(),
    hashes: sha256ContentHashService,
    ids: { newId: (prefix) => `${prefix}_${++chunkIds}` },
  });
  const agent = await createTestAgent({ config, retriever: knowledge });
  return { ...agent, knowledge };
}

/** The text of the [CONTEXT] part of a request's last user message; undefined when it has none. */
function contextOf(request: LlmRequest | undefined): string | undefined {
  const message = request?.input.findLast((item) => item.type === "user_message");
  if (message?.type !== "user_message") throw new Error("the request has no user message");
  const part = message.content.find((item) => item.type === "text" && item.text.startsWith("[CONTEXT]"));
  return part?.type === "text" ? part.text : undefined;
}

async function retrievalOf(
  agent: Awaited<ReturnType<typeof agentWithKnowledge>>,
  turnId: string,
  sessionId = "s",
) {
  const trace = resultOf(await agent.service.getTurnTrace(PRINCIPAL, sessionId, turnId));
  return trace.rounds[0]?.retrieval;
}

const withRetrieval = (retrieval: { topK?: number; maxContextTokens?: number }): AgentCatalogConfig => ({
  ...TEST_CATALOG,
  conversationContexts: TEST_CATALOG.conversationContexts.map((context) => ({ ...context, retrieval })),
});

describe("turn-time retrieval into [CONTEXT] (AGN-002, docs/knowledge.md)", () => {
  it("sends the workspace's best chunks as the [CONTEXT] block, byte for byte, and traces the query and chunks", async () => {
    const agent = await agentWithKnowledge();
    await agent.knowledge.upsert({
      principal: PRINCIPAL,
      workspaceId: "ws",
      documents: [invoiceManager, readme, shipping],
    });
    agent.provider.enqueue({ text: "Sum of lines." });
    responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        instruction: "How is the invoice total computed?",
        workspaceId: "ws",
        ragScope: [{ key: "language", operator: "!=", values: ["python"] }],
        inputArtifacts: [
          {
            relativePath: "src/billing/Invoice.cs",
            fileName: "Invoice.cs",
            contents: "class Invoice {}",
            origin: "ide",
          },
        ],
      }),
    );
    expect(contextOf(agent.provider.requests[0])).toBe(
      [
        "[CONTEXT]",
        "",
        "=== CHUNK 1 ===",
        "Id: ctx_1",
        "Path: src/billing/InvoiceManager.cs",
        "Lines: 1-7",
        "Language: csharp",
        "````csharp",
        invoiceManager.contents,
        "````",
        "",
        "=== CHUNK 2 ===",
        "Id: ctx_2",
        "Path: docs/billing.md",
        "Lines: 1-3",
        "Language: markdown",
        "```markdown",
        readme.contents,
        "```",
      ].join("\n"),
    );
    const retrieval = await retrievalOf(agent, "t1");
    expect(retrieval).toMatchObject({
      outcome: "included",
      workspaceId: "ws",
      workspaceFrom: "request",
      query: "How is the invoice total computed?\nsrc/billing/Invoice.cs\nInvoice.cs",
      chunks: [
        { id: "ctx_1", path: "src/billing/InvoiceManager.cs", startLine: 1, endLine: 7 },
        { id: "ctx_2", path: "docs/billing.md", startLine: 1, endLine: 3 },
      ],
      previouslyProvided: [],
      skipped: 0,
    });
    expect(retrieval?.tokens).toBe(countTokens(contextOf(agent.provider.requests[0]) ?? ""));
    expect(retrieval?.chunks[0]?.score).toBeGreaterThan(retrieval?.chunks[1]?.score ?? Infinity);
  });

  it("omits the block and says why: no workspace, an unknown one (or another principal's, with a WORKSPACE_NOT_FOUND warning), an empty index, no match", async () => {
    const agent = await agentWithKnowledge();
    await agent.knowledge.upsert({ principal: "bob", workspaceId: "bobs", documents: [readme] });
    await agent.knowledge.upsert({ principal: PRINCIPAL, workspaceId: "ws", documents: [readme] });
    await agent.knowledge.upsert({ principal: PRINCIPAL, workspaceId: "empty", documents: [] });
    agent.provider.enqueue({ text: "1" }, { text: "2" }, { text: "3" }, { text: "4" }, { text: "5" });
    const turns = [
      { turnId: "t1", sessionId: "fresh", instruction: "invoice" },
      { turnId: "t2", sessionId: "s", instruction: "invoice", workspaceId: "nope" },
      { turnId: "t3", sessionId: "s", instruction: "invoice", workspaceId: "bobs" },
      { turnId: "t4", sessionId: "s", instruction: "invoice", workspaceId: "empty" },
      { turnId: "t5", sessionId: "s", instruction: "zebra crossing", workspaceId: "ws" },
    ];
    const warnings = [];
    for (const turn of turns) {
      const result = await agent.execute(turn);
      responseOf(result);
      warnings.push(result.warnings);
    }
    expect(agent.provider.requests.map(contextOf)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    // An unknown workspace (another principal's is one) is the one a client can fix: the answer says so.
    const notFound = (workspaceId: string) => ({
      code: "WORKSPACE_NOT_FOUND",
      message: `Workspace "${workspaceId}" is not indexed for you: the turn ran without its [CONTEXT] block. Push the workspace's documents to index it.`,
    });
    expect(warnings).toEqual([[], [notFound("nope")], [notFound("bobs")], [], []]);
    const outcomes = await Promise.all(
      turns.map(async (turn) => {
        const retrieval = await retrievalOf(agent, turn.turnId, turn.sessionId);
        return [retrieval?.outcome, retrieval?.workspaceId, retrieval?.query];
      }),
    );
    expect(outcomes).toEqual([
      ["no_workspace", null, ""],
      ["unknown_workspace", "nope", "invoice"],
      ["unknown_workspace", "bobs", "invoice"],
      ["empty_index", "empty", "invoice"],
      ["no_match", "ws", "zebra crossing"],
    ]);
  });

  it("retrieves from the session's last workspace when a turn names none, and filters by ragScope", async () => {
    const agent = await agentWithKnowledge();
    await agent.knowledge.upsert({
      principal: PRINCIPAL,
      workspaceId: "ws",
      documents: [invoiceManager, readme],
    });
    agent.provider.enqueue({ text: "1" }, { text: "2" });
    responseOf(
      await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Hello", workspaceId: "ws" }),
    );
    responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t2",
        instruction: "invoice total",
        ragScope: [{ key: "language", operator: "==", values: ["markdown"] }],
      }),
    );
    expect(await retrievalOf(agent, "t2")).toMatchObject({
      outcome: "included",
      workspaceId: "ws",
      workspaceFrom: "session",
      chunks: [{ id: "ctx_1", path: "docs/billing.md" }],
    });
  });

  it("does not send a chunk the provider already holds: the block's last line names it instead", async () => {
    const agent = await agentWithKnowledge();
    const key = { principal: PRINCIPAL, workspaceId: "ws" };
    await agent.knowledge.upsert({ ...key, documents: [invoiceManager, readme] });
    agent.provider.enqueue({ text: "1" }, { text: "2" }, { text: "3" });
    responseOf(
      await agent.execute({
        sessionId: "s",
        turnId: "t1",
        instruction: "invoice manager",
        workspaceId: "ws",
        ragScope: [{ key: "language", operator: "==", values: ["csharp"] }],
      }),
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "invoice total" }));
    expect(contextOf(agent.provider.requests[1])).toBe(
      [
        "[CONTEXT]",
        "",
        "=== CHUNK 1 ===",
        "Id: ctx_1",
        "Path: docs/billing.md",
        "Lines: 1-3",
        "Language: markdown",
        "```markdown",
        readme.contents,
        "```",
        "",
        "Previously provided: src/billing/InvoiceManager.cs:1-7",
      ].join("\n"),
    );
    expect(await retrievalOf(agent, "t2")).toMatchObject({
      chunks: [{ id: "ctx_1", path: "docs/billing.md" }],
      previouslyProvided: [{ path: "src/billing/InvoiceManager.cs", startLine: 1, endLine: 7 }],
    });
    // A changed document has new chunks: they are sent again.
    await agent.knowledge.upsert({
      ...key,
      documents: [{ ...invoiceManager, contents: `${invoiceManager.contents}\n// v2` }],
    });
    responseOf(await agent.execute({ sessionId: "s", turnId: "t3", instruction: "invoice total" }));
    expect(contextOf(agent.provider.requests[2])).toMatch(
      /^\[CONTEXT\]\n\n=== CHUNK 1 ===\nId: ctx_1\nPath: src\/billing\/InvoiceManager\.cs\nLines: 1-8\n[\s\S]*\n\nPreviously provided: docs\/billing\.md:1-3$/,
    );
  });

  it("sends the chunks of a failed turn again: its cursor, and what the provider holds, rolled back", async () => {
    const agent = await agentWithKnowledge();
    await agent.knowledge.upsert({ principal: PRINCIPAL, workspaceId: "ws", documents: [readme] });
    agent.provider.enqueue({ failure: fail("PROVIDER_ERROR", "down", { status: 500 }) }, { text: "ok" });
    errorsOf(
      await agent.execute({ sessionId: "s", turnId: "t1", instruction: "invoice", workspaceId: "ws" }),
    );
    responseOf(
      await agent.execute({ sessionId: "s", turnId: "t2", instruction: "invoice", workspaceId: "ws" }),
    );
    expect(contextOf(agent.provider.requests[1])).toBe(contextOf(agent.provider.requests[0]));
    expect(contextOf(agent.provider.requests[1])).not.toContain("Previously provided");
    // The failed turn's trace still shows what it retrieved.
    expect(await retrievalOf(agent, "t1")).toMatchObject({ outcome: "included", chunks: [{ id: "ctx_1" }] });
  });

  it("counts an abandoned turn's chunks as provided: its message is sent again before the next turn's", async () => {
    const agent = await agentWithKnowledge();
    await agent.knowledge.upsert({ principal: PRINCIPAL, workspaceId: "ws", documents: [readme] });
    agent.provider.enqueue(
      { toolCalls: [{ name: "read_file", arguments: { path: "docs/billing.md" }, callId: "c1" }] },
      { text: "ok" },
    );
    responseOf(
      await agent.execute({ sessionId: "s", turnId: "t1", instruction: "invoice", workspaceId: "ws" }),
    );
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "invoice total" }));
    const second = agent.provider.requests[1];
    const contexts = (second?.input ?? []).flatMap((item) =>
      item.type === "user_message"
        ? item.content.flatMap((part) =>
            part.type === "text" && part.text.startsWith("[CONTEXT]") ? [part.text] : [],
          )
        : [],
    );
    // The abandoned turn's message (with its block) goes first, so the new one only refers back to it.
    expect(contexts).toHaveLength(2);
    expect(contexts[0]).toContain("=== CHUNK 1 ===\nId: ctx_1\nPath: docs/billing.md");
    expect(contextOf(second)).toBe("[CONTEXT]\n\nPreviously provided: docs/billing.md:1-3");
  });

  it("dedups for a provider without server-side state too: the replayed transcript holds the earlier block", async () => {
    const agent = await agentWithKnowledge();
    await agent.knowledge.upsert({ principal: PRINCIPAL, workspaceId: "ws", documents: [readme] });
    agent.stateless.enqueue({ text: "1" }, { text: "2" });
    const turn = {
      sessionId: "r",
      conversationContextId: "stateless",
      instruction: "invoice",
      workspaceId: "ws",
    };
    responseOf(await agent.execute({ ...turn, turnId: "t1" }));
    responseOf(await agent.execute({ ...turn, turnId: "t2" }));
    const second = agent.stateless.requests[1];
    expect(second?.continuation.type).toBe("replay");
    expect(contextOf(second)).toBe("[CONTEXT]\n\nPreviously provided: docs/billing.md:1-3");
  });

  it("keeps the block within topK and maxContextTokens, skipping a chunk that does not fit", async () => {
    const big: WorkspaceDocument = {
      path: "src/big.ts",
      contents: `export const invoiceTable = [\n${"  1,\n".repeat(200)}];`,
    };
    const agent = await agentWithKnowledge(withRetrieval({ topK: 2, maxContextTokens: 200 }));
    await agent.knowledge.upsert({
      principal: PRINCIPAL,
      workspaceId: "ws",
      documents: [big, readme, invoiceManager],
    });
    agent.provider.enqueue({ text: "ok" });
    responseOf(
      await agent.execute({ sessionId: "s", turnId: "t1", instruction: "invoice table", workspaceId: "ws" }),
    );
    const retrieval = await retrievalOf(agent, "t1");
    // The best match (the table) is too big; the third (the readme) is beyond topK.
    expect(retrieval?.chunks.map((chunk) => chunk.path)).toEqual(["src/billing/InvoiceManager.cs"]);
    expect(retrieval?.skipped).toBe(1);
    expect(retrieval?.tokens).toBeLessThanOrEqual(200);
  });

  it("fails the turn loudly when retrieval fails, and the session goes on", async () => {
    const agent = await agentWithKnowledge();
    await agent.knowledge.upsert({ principal: PRINCIPAL, workspaceId: "ws", documents: [readme] });
    const retrieve = agent.knowledge.retrieve.bind(agent.knowledge);
    agent.knowledge.retrieve = async () => {
      throw new Error("index offline");
    };
    expect(
      errorsOf(
        await agent.execute({ sessionId: "s", turnId: "t1", instruction: "invoice", workspaceId: "ws" }),
      ),
    ).toEqual([
      {
        code: "INTERNAL",
        // What was thrown is the operator's (the observer's `fault`), never the answer's.
        message: "The turn failed unexpectedly; the request id identifies it in the service's logs.",
      },
    ]);
    expect(agent.provider.requests).toEqual([]);
    agent.knowledge.retrieve = retrieve;
    agent.provider.enqueue({ text: "ok" });
    responseOf(
      await agent.execute({ sessionId: "s", turnId: "t2", instruction: "invoice", workspaceId: "ws" }),
    );
    expect(contextOf(agent.provider.requests[0])).toContain("Path: docs/billing.md");
  });

  it("saves tokens over a 20-turn session by not repeating chunks the provider holds", async () => {
    // A workspace of 12 modules; each turn asks about two of them, so topics come back as the session goes on.
    const modules = Array.from({ length: 12 }, (_, index) => ({
      path: `src/module${index}/service${index}.ts`,
      contents: Array.from(
        { length: 12 },
        (_, line) =>
          `export function topic${index}Step${line}(input: number): number { return input * ${line + 1}; }`,
      ).join("\n"),
    }));
    const tokensOfBlocks = async (dedup: boolean) => {
      const agent = await agentWithKnowledge();
      await agent.knowledge.upsert({ principal: PRINCIPAL, workspaceId: "ws", documents: modules });
      let total = 0;
      for (let turn = 0; turn < 20; turn++) {
        agent.provider.enqueue({ text: `answer ${turn}` });
        const topics = [turn % 5, (turn * 3) % 7].map((index) => `topic${index}`).join(" ");
        // Without dedup each turn is the first of its own session: nothing is held by the provider.
        const sessionId = dedup ? "long" : `single-${turn}`;
        responseOf(
          await agent.execute({
            sessionId,
            turnId: `t${turn}`,
            instruction: `Explain ${topics}`,
            workspaceId: "ws",
          }),
        );
        total += countTokens(contextOf(agent.provider.requests[turn]) ?? "");
      }
      return total;
    };
    const without = await tokensOfBlocks(false);
    const withDedup = await tokensOfBlocks(true);
    console.log(
      `[CONTEXT] tokens over 20 turns: ${without} without dedup, ${withDedup} with (${Math.round((100 * (without - withDedup)) / without)}% saved)`,
    );
    expect(withDedup).toBeLessThan(without / 2);
  });
});
