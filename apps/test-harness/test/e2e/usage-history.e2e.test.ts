/**
 * Usage is history, over real HTTP on both stores: a session deleted and made again under the same ids adds its
 * calls to the old ones; the session grouping of `GET /v1/usage` is paged. With embeddings configured (PGlite,
 * pgvector, the scripted `/v1/embeddings`), embedding requests are usage too, priced by the built-in table.
 */
import type { UsageReport } from "@aptix/contracts";
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

const usage = (input: number, output: number) => ({
  usage: { input_tokens: input, output_tokens: output, input_tokens_details: { cached_tokens: 0 } },
});

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

  it("keeps every call of a session deleted and made again under the same ids: four lives, four calls", async () => {
    const sessionId = uniqueId("again");
    for (let life = 1; life <= 4; life++) {
      harness.script(step.text(`Life ${life}.`, usage(500, 10)));
      expectFinal(await service.post(userTurn(sessionId, "t1", `Life ${life}.`)));
      // Each life's view counts its own call alone.
      const view = expectOk(await service.session(sessionId)) as { usage: { llmCalls: number } };
      expect(view.usage.llmCalls).toBe(1);
      expectOk(await service.send("DELETE", `/v1/sessions/${sessionId}`));
    }
    const report = expectOk(await service.get("/v1/usage?groupBy=session&limit=500")) as UsageReport;
    const bucket = report.buckets.find((found) => found.key === sessionId);
    expect(bucket).toMatchObject({ inputTokens: 2_000, outputTokens: 40, llmCalls: 4 });
  });

  it("pages the session grouping by limit and cursor, each page with the whole range's total", async () => {
    // Bob's usage: his sessions alone in the report.
    const principal = "bob";
    const base = uniqueId("pager");
    const sessions = [`${base}-1`, `${base}-2`, `${base}-3`];
    for (const sessionId of sessions) {
      harness.script(step.text("Done.", usage(100, 1)));
      expectFinal(await service.post(userTurn(sessionId, "t1", "Go."), principal));
    }
    const first = expectOk(await service.get("/v1/usage?groupBy=session&limit=2", principal)) as UsageReport;
    expect(first.buckets.map((bucket) => bucket.key)).toEqual(sessions.slice(0, 2));
    expect(first.total).toMatchObject({ inputTokens: 300, llmCalls: 3 });
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = expectOk(
      await service.get(
        `/v1/usage?groupBy=session&limit=2&cursor=${encodeURIComponent(first.nextCursor ?? "")}`,
        principal,
      ),
    ) as UsageReport;
    expect(second.buckets.map((bucket) => bucket.key)).toEqual(sessions.slice(2));
    expect(second.nextCursor).toBeUndefined();
    expect(second.total).toEqual(first.total);
    for (const [query, field] of [
      ["groupBy=session&limit=0", "limit"],
      [`groupBy=session&cursor=${sessions[0]}`, "cursor"],
      ["groupBy=day&limit=2", "limit"],
    ] as const) {
      const refused = expectFailure(
        await service.get(`/v1/usage?${query}`, principal),
        400,
        "VALIDATION_FAILED",
      );
      expect(refused.details?.fields).toEqual([expect.objectContaining({ path: field })]);
    }
  });
});

describe("with embeddings configured (PGlite, pgvector, the scripted /v1/embeddings)", () => {
  let service: TestService;
  beforeAll(async () => {
    const config = await writeCatalog({
      ...E2E_CATALOG,
      embeddings: { provider: "openai", model: "text-embedding-3-small", batchSize: 2 },
    });
    service = await startTestService({ store: "pglite", harness, env: { APTIX_CONFIG: config } });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("counts each embeddings request as usage: a push's outside any session, a turn's query in its session", async () => {
    const principal = "alice";
    const ws = uniqueId("ws");
    const documents = [
      { path: "a.md", contents: "Invoices are summed line by line." },
      { path: "b.md", contents: "Parcels are shipped to an address." },
      { path: "c.md", contents: "Refunds are paid back." },
    ];
    expectOk(await service.send("PUT", `/v1/workspaces/${ws}/documents`, { documents }, principal));
    const sessionId = uniqueId("s");
    harness.script(step.text("Summed.", usage(50, 5)));
    expectFinal(
      await service.post(
        userTurn(sessionId, "t1", "How are invoices summed?", { workspaceId: ws }),
        principal,
      ),
    );
    // The scripted server bills a token per word of each text embedded.
    const billed = harness
      .embeddingRequests()
      .map((request) =>
        (request.body as { input: string[] }).input.reduce(
          (sum, text) => sum + text.split(/\s+/).filter(Boolean).length,
          0,
        ),
      );
    expect(billed).toHaveLength(3);
    const [pushA, pushB, query] = billed as [number, number, number];

    const byModel = expectOk(await service.get("/v1/usage?groupBy=model", principal)) as UsageReport;
    const embeddings = byModel.buckets.find((bucket) => bucket.key === "text-embedding-3-small");
    expect(embeddings).toMatchObject({ inputTokens: pushA + pushB + query, outputTokens: 0, llmCalls: 3 });
    // Priced by the built-in table: $0.02 a million input tokens.
    expect(embeddings?.costUsd ?? Number.NaN).toBeCloseTo(((pushA + pushB + query) * 0.02) / 1e6, 12);
    const bySession = expectOk(await service.get("/v1/usage?groupBy=session", principal)) as UsageReport;
    expect(bySession.buckets.map((bucket) => [bucket.key, bucket.inputTokens, bucket.llmCalls])).toEqual([
      ["", pushA + pushB, 2],
      [sessionId, 50 + query, 2],
    ]);
  });
});
