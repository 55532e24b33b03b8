/**
 * Workspace knowledge over real HTTP (docs/knowledge.md): documents pushed through the workspace routes into the
 * real store's index (PGlite and Postgres), retrieved for a user turn into the `[CONTEXT]` block the scripted
 * OpenAI server receives, scoped by principal, and validated at the edge. Embeddings (the SDK against the
 * scripted `/v1/embeddings`, pgvector) run on PGlite, whose bundled `vector` extension needs no install.
 */
import type { RetrievalTrace } from "@aptix/contracts";
import { type ScriptedOpenAI, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  checkAndResetHarness,
  E2E_CATALOG,
  E2E_STORES,
  expectFailure,
  expectFinal,
  expectOk,
  startTestService,
  type TestService,
  type TestStoreKind,
  uniqueId,
  userTurn,
  writeCatalog,
} from "../../src/e2e/index.js";

const MiB = 1024 * 1024;

const invoiceManager = {
  path: "src/Billing/InvoiceManager.cs",
  repo: "billing",
  contents: [
    "namespace Billing;",
    "",
    "/// Totals are documented with ``` fences.",
    "public class InvoiceManager",
    "{",
    "    public decimal Total(Invoice invoice) => invoice.Lines.Sum(line => line.Amount);",
    "}",
  ].join("\n"),
};
const billingDocs = {
  path: "docs/billing.md",
  repo: "billing",
  tags: ["docs"],
  contents: "# Billing\n\nEvery invoice has lines; the invoice total is their sum.",
};
const webInvoice = {
  path: "web/src/invoice.ts",
  repo: "web",
  contents: "export const invoiceTotal = (invoice: Invoice) => invoice.total;",
};
const parcel = {
  path: "src/Shipping/parcel.py",
  repo: "billing",
  language: "python",
  contents: "def ship_parcel(address):\n    return label_for(address)",
};
const DOCUMENTS = [invoiceManager, billingDocs, webInvoice, parcel];

/** The text parts of the last user message a `/v1/responses` request sent. */
function userTextParts(body: unknown): string[] {
  const input = (
    body as { input: Array<{ role?: string; content?: Array<{ type: string; text?: string }> }> }
  ).input;
  const message = input.findLast((item) => item.role === "user");
  return (message?.content ?? []).flatMap((part) => (part.type === "input_text" ? [part.text ?? ""] : []));
}

let harness: ScriptedOpenAI;

beforeAll(async () => {
  harness = await startScriptedOpenAI();
});
afterAll(async () => {
  await harness?.close();
});
afterEach(() => {
  checkAndResetHarness(harness);
});

describe.each(E2E_STORES)("%s store", (store: TestStoreKind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ store, harness });
  });
  afterAll(async () => {
    await service?.close();
  });

  const workspace = (id: string) => `/v1/workspaces/${encodeURIComponent(id)}`;
  const push = (id: string, body: unknown, as: "alice" | "bob" = "alice") =>
    service.send("PUT", `${workspace(id)}/documents`, body, as);
  const search = (id: string, body: unknown, as: "alice" | "bob" = "alice") =>
    service.send<{ chunks: Array<{ id: string; path: string }> }>(
      "POST",
      `${workspace(id)}/search`,
      body,
      as,
    );

  it("sends the provider the [CONTEXT] block of a turn with workspaceId and ragScope, and traces it", async () => {
    const ws = uniqueId("ws");
    expect(expectOk(await push(ws, { documents: DOCUMENTS }))).toEqual({
      workspaceId: ws,
      upserted: 4,
      unchanged: 0,
      deleted: 0,
      chunks: 4,
    });
    const sessionId = uniqueId("s");
    harness.script(step.text("Lines are summed."), step.text("As said."));
    expectFinal(
      await service.post(
        userTurn(sessionId, "t1", "How does InvoiceManager compute the invoice Total?", {
          workspaceId: ws,
          ragScope: [{ key: "repo", operator: "==", values: ["billing"] }],
        }),
      ),
    );
    const [first] = harness.responseRequests();
    expect(userTextParts(first?.body)).toEqual([
      "[MODE: general]\n\n[INSTRUCTION]\nHow does InvoiceManager compute the invoice Total?",
      [
        "[CONTEXT]",
        "",
        "=== CHUNK 1 ===",
        "Id: ctx_1",
        "Path: src/Billing/InvoiceManager.cs",
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
        billingDocs.contents,
        "```",
      ].join("\n"),
    ]);
    const trace = expectOk(await service.trace(sessionId, "t1"));
    const retrieval = (trace.rounds[0] as { retrieval?: RetrievalTrace }).retrieval;
    expect(retrieval).toMatchObject({
      outcome: "included",
      workspaceId: ws,
      workspaceFrom: "request",
      query: "How does InvoiceManager compute the invoice Total?",
      chunks: [
        { id: "ctx_1", path: "src/Billing/InvoiceManager.cs", startLine: 1, endLine: 7 },
        { id: "ctx_2", path: "docs/billing.md", startLine: 1, endLine: 3 },
      ],
      previouslyProvided: [],
      skipped: 0,
    });

    // The next turn names no workspace: the session's last one answers, and what the provider holds is named,
    // not sent again.
    expectFinal(
      await service.post(
        userTurn(sessionId, "t2", "And the invoice total of the billing docs?", {
          ragScope: [{ key: "repo", operator: "!=", values: ["web"] }],
        }),
      ),
    );
    const second = harness.responseRequests()[1];
    expect(userTextParts(second?.body)[1]).toBe(
      "[CONTEXT]\n\nPreviously provided: docs/billing.md:1-3, src/Billing/InvoiceManager.cs:1-7",
    );
  });

  it("keeps a workspace from other principals: they can neither see nor search it, nor retrieve from it", async () => {
    const ws = uniqueId("ws");
    expectOk(await push(ws, { documents: DOCUMENTS }));
    expectFailure(await service.get(workspace(ws), "bob"), 404, "WORKSPACE_NOT_FOUND");
    expectFailure(await search(ws, { query: "invoice" }, "bob"), 404, "WORKSPACE_NOT_FOUND");
    expectFailure(
      await service.send("DELETE", `${workspace(ws)}/documents`, { paths: [billingDocs.path] }, "bob"),
      404,
      "WORKSPACE_NOT_FOUND",
    );
    expectFailure(await service.send("DELETE", workspace(ws), undefined, "bob"), 404, "WORKSPACE_NOT_FOUND");
    const sessionId = uniqueId("s");
    harness.script(step.text("No context."));
    const answer = await service.post(userTurn(sessionId, "t1", "invoice total", { workspaceId: ws }), "bob");
    expectFinal(answer);
    expect(userTextParts(harness.responseRequests()[0]?.body)).toHaveLength(1);
    // Bob hears that the turn ran without [CONTEXT], as he would for a workspace nobody has.
    expect(answer.body.warnings).toEqual([
      { code: "WORKSPACE_NOT_FOUND", message: expect.stringContaining(`Workspace "${ws}" is not indexed`) },
    ]);
    const trace = expectOk(await service.trace(sessionId, "t1", "bob"));
    expect((trace.rounds[0] as { retrieval?: RetrievalTrace }).retrieval).toMatchObject({
      outcome: "unknown_workspace",
      workspaceId: ws,
    });
    // Alice's workspace is whole.
    expect(expectOk(await service.get(workspace(ws)))).toMatchObject({ documents: 4, chunks: 4 });
  });

  it("re-chunks nothing when unchanged documents are pushed again, and replace: true deletes the rest", async () => {
    const ws = uniqueId("ws");
    expectOk(await push(ws, { documents: DOCUMENTS }));
    const before = expectOk(await search(ws, { query: "invoice total", limit: 50 }));
    expect(expectOk(await push(ws, { documents: DOCUMENTS }))).toEqual({
      workspaceId: ws,
      upserted: 0,
      unchanged: 4,
      deleted: 0,
      chunks: 4,
    });
    // The same chunks, by id: nothing was cut again.
    expect(expectOk(await search(ws, { query: "invoice total", limit: 50 }))).toEqual(before);

    expect(expectOk(await push(ws, { documents: [billingDocs], replace: true }))).toEqual({
      workspaceId: ws,
      upserted: 0,
      unchanged: 1,
      deleted: 3,
      chunks: 1,
    });
    expect(expectOk(await service.get(workspace(ws)))).toMatchObject({
      workspaceId: ws,
      documents: 1,
      chunks: 1,
    });
    expect(expectOk(await search(ws, { query: "invoice" })).chunks.map((chunk) => chunk.path)).toEqual([
      billingDocs.path,
    ]);
  });

  it("refuses bad input with a clear 400 naming the field, and changes nothing", async () => {
    const ws = uniqueId("ws");
    expectOk(await push(ws, { documents: DOCUMENTS }));
    const refusal = async (answer: ReturnType<typeof push>) => {
      const error = expectFailure(await answer, 400, "VALIDATION_FAILED");
      return { message: error.message, fields: (error.details as { fields: unknown }).fields };
    };
    expect(
      await refusal(push(ws, { documents: [{ path: "/etc/passwd", contents: "root" }], replace: true })),
    ).toEqual({
      message:
        "Invalid documents request: documents[0].path must be relative to the workspace root, not start with '/'.",
      fields: [
        { path: "documents[0].path", message: "must be relative to the workspace root, not start with '/'" },
      ],
    });
    expect(
      await refusal(
        push(ws, { documents: [{ path: "big.txt", contents: "x".repeat(MiB + 1) }], replace: true }),
      ),
    ).toEqual({
      message: `Invalid documents request: documents[0].contents must be at most ${MiB} bytes (UTF-8).`,
      fields: [{ path: "documents[0].contents", message: `must be at most ${MiB} bytes (UTF-8)` }],
    });
    expect(
      await refusal(
        search(ws, { query: "invoice", ragScope: [{ key: "repo", operator: "~=", values: ["web"] }] }),
      ),
    ).toMatchObject({ fields: [{ path: "ragScope[0].operator" }] });
    const sessionId = uniqueId("s");
    expect(
      expectFailure(
        await service.post(
          userTurn(sessionId, "t1", "invoice", {
            workspaceId: ws,
            ragScope: [{ key: "repo", operator: "startsWith", values: ["b"] }],
          }),
        ),
        400,
        "VALIDATION_FAILED",
      ).details,
    ).toMatchObject({ fields: [{ path: "ragScope[0].operator" }] });
    // Nothing changed: the refused `replace: true` pushes deleted nothing.
    expect(expectOk(await service.get(workspace(ws)))).toMatchObject({ documents: 4, chunks: 4 });
  });
});

const EMBEDDINGS_CATALOG = {
  ...E2E_CATALOG,
  embeddings: { provider: "openai", model: "text-embedding-3-small", batchSize: 2 },
};

describe("with embeddings configured (PGlite, pgvector, the scripted /v1/embeddings)", () => {
  let service: TestService;
  beforeAll(async () => {
    const config = await writeCatalog(EMBEDDINGS_CATALOG);
    service = await startTestService({ store: "pglite", harness, env: { APTIX_CONFIG: config } });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("embeds only new or changed chunks, in batches, and fuses both rankings", async () => {
    const ws = uniqueId("ws");
    const documents = [invoiceManager, billingDocs, parcel];
    expectOk(await service.send("PUT", `/v1/workspaces/${ws}/documents`, { documents }));
    const inputsOf = () =>
      harness.embeddingRequests().map((request) => (request.body as { input: string[] }).input.length);
    expect(inputsOf()).toEqual([2, 1]);
    expectOk(
      await service.send("PUT", `/v1/workspaces/${ws}/documents`, {
        documents: [invoiceManager, billingDocs, { ...parcel, contents: `${parcel.contents}\n# v2` }],
      }),
    );
    expect(inputsOf()).toEqual([2, 1, 1]);
    const found = expectOk(
      await service.send<{ chunks: Array<{ path: string; score: number }> }>(
        "POST",
        `/v1/workspaces/${ws}/search`,
        {
          query: "ship a parcel to an address",
        },
      ),
    );
    // The query was embedded once more; the parcel is first in both rankings (1/61 + 1/61).
    expect(inputsOf()).toEqual([2, 1, 1, 1]);
    expect(found.chunks[0]?.path).toBe(parcel.path);
    expect(found.chunks[0]?.score).toBeCloseTo(2 / 61, 10);
  });
});
