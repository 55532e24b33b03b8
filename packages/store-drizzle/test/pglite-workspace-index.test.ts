import { codeSearchText } from "@aptix/core";
import { ManualClock } from "@aptix/core/testing";
import { describeWorkspaceIndexContract } from "@aptix/testing-stores";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { afterAll, describe, expect, it } from "vitest";
import { openPgliteStore, openStore } from "../src/index.js";
import { randomSchema } from "./support/databases.js";

// One in-memory PGlite with pgvector for the whole file (it takes seconds to start); each test gets a fresh schema.
let database: Promise<PGlite> | undefined;

function sharedPglite(): Promise<PGlite> {
  database ??= PGlite.create({ extensions: { vector } });
  return database;
}

afterAll(async () => {
  await (await database)?.close();
});

describeWorkspaceIndexContract(
  "drizzle on PGlite (in memory, with pgvector)",
  async () => {
    const client = await sharedPglite();
    const schema = randomSchema();
    const clock = new ManualClock();
    const store = await openPgliteStore(client, { schema, clock, vectors: true });
    return {
      index: store.workspaceIndex,
      clock,
      async close() {
        await store.close();
        await client.exec(`drop schema "${schema}" cascade`);
      },
    };
  },
  { vectors: true },
);

describe("vectors on PGlite", () => {
  it("loads the bundled pgvector for a store opened by URL with vectors", async () => {
    const store = await openStore("memory://", { vectors: true });
    try {
      const key = { principal: "principal-a", workspaceId: "workspace-1" };
      const text = "export const answer = 42;";
      await store.workspaceIndex.upsertDocuments({
        key,
        replace: false,
        documents: [
          {
            path: "answer.ts",
            contentHash: "h",
            language: "typescript",
            repo: null,
            tags: [],
            metadata: {},
            chunks: [
              { chunkId: "chunk-1", startLine: 1, endLine: 1, text, searchText: codeSearchText(text) },
            ],
          },
        ],
      });
      await store.workspaceIndex.storeEmbeddings(key, "model", [
        { chunkId: "chunk-1", embedding: [0.5, 0.5] },
      ]);
      const found = await store.workspaceIndex.searchVector({
        key,
        model: "model",
        embedding: [1, 1],
        scope: [],
        limit: 5,
      });
      expect(found?.map((chunk) => [chunk.chunkId, Math.round(chunk.score * 1e6) / 1e6])).toEqual([
        ["chunk-1", 1],
      ]);
    } finally {
      await store.close();
    }
  }, 60_000);

  it("refuses to open with vectors over a PGlite started without pgvector, naming the extension", async () => {
    const client = await PGlite.create();
    try {
      await expect(openPgliteStore(client, { schema: randomSchema(), vectors: true })).rejects.toThrow(
        /extension "vector" \(pgvector\)/,
      );
    } finally {
      await client.close();
    }
  }, 60_000);

  it("refuses vector search, saying how to enable it, when opened without vectors", async () => {
    const client = await sharedPglite();
    const schema = randomSchema();
    const store = await openPgliteStore(client, { schema });
    try {
      const key = { principal: "principal-a", workspaceId: "workspace-1" };
      await store.workspaceIndex.upsertDocuments({ key, replace: false, documents: [] });
      await expect(
        store.workspaceIndex.searchVector({ key, model: "model", embedding: [1], scope: [], limit: 5 }),
      ).rejects.toThrow(/vectors: true/);
    } finally {
      await store.close();
      await client.exec(`drop schema "${schema}" cascade`);
    }
  });
});
