import type { WorkspaceDocument } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { sha256ContentHashService } from "../../src/defaults/sha256-content-hash-service.js";
import { inMemorySessionStores } from "../../src/in-memory/in-memory-session-stores.js";
import { InMemoryWorkspaceIndex } from "../../src/in-memory/in-memory-workspace-index.js";
import type { Embedded, Embedder } from "../../src/ports/embedder.js";
import type { UsageStore } from "../../src/ports/usage-store.js";
import type { WorkspaceIndex, WorkspaceKey } from "../../src/ports/workspace-index.js";
import { WorkspaceKnowledge } from "../../src/retrieval/workspace-knowledge.js";
import { ManualClock } from "../../src/testing/index.js";

const alice = { principal: "alice", workspaceId: "ws" };
const bob = { principal: "bob", workspaceId: "ws" };
/** The session and turn a turn-time retrieval asks for. */
const asking = { sessionId: "s-1", turnId: "t-1" };

const billing: WorkspaceDocument = {
  path: "src/billing/invoice-manager.ts",
  contents:
    "export class InvoiceManager {\n  total(lines: number[]) {\n    return lines.reduce((a, b) => a + b, 0);\n  }\n}",
  repo: "shop",
  tags: ["billing"],
};
const readme: WorkspaceDocument = {
  path: "README.md",
  contents: "# Shop\n\nThe shop sells things and sends an invoice by mail.",
};
const shipping: WorkspaceDocument = {
  path: "src/shipping/parcel.py",
  contents: "def ship_parcel(address):\n    return label_for(address)",
};

/** A deterministic embedder: each text's words hashed into 16 buckets. It counts every text it embeds. */
class CountingEmbedder implements Embedder {
  readonly id = "hashing";
  readonly batches: string[][] = [];
  async embed({ texts }: { model: string; texts: readonly string[] }): Promise<Embedded> {
    this.batches.push([...texts]);
    // A token per character: a count the test can foresee.
    const inputTokens = texts.reduce((sum, text) => sum + text.length, 0);
    const vectors = texts.map((text) => {
      const vector = new Array<number>(16).fill(0);
      for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
        const bucket = [...word].reduce((sum, char) => sum + char.charCodeAt(0), 0) % 16;
        vector[bucket] = (vector[bucket] ?? 0) + 1;
      }
      return vector;
    });
    return { vectors, inputTokens };
  }
}

/** The counts an upsert answered, failing the test on a failure. */
async function pushed(service: WorkspaceKnowledge, input: Parameters<WorkspaceKnowledge["upsert"]>[0]) {
  const result = await service.upsert(input);
  if (!result.successful) throw new Error(result.errors[0].message);
  return result.result;
}

function knowledge(
  options: {
    index?: WorkspaceIndex;
    embedder?: Embedder;
    batchSize?: number;
    minted?: string[];
    usage?: UsageStore;
  } = {},
) {
  let ids = 0;
  return new WorkspaceKnowledge({
    index: options.index ?? new InMemoryWorkspaceIndex(),
    hashes: sha256ContentHashService,
    ids: {
      newId: (prefix) => {
        const id = `${prefix}_${++ids}`;
        options.minted?.push(id);
        return id;
      },
    },
    ...(options.usage ? { usage: options.usage, clock: new ManualClock() } : {}),
    ...(options.embedder
      ? {
          embeddings: {
            embedder: options.embedder,
            model: "hashed-words",
            batchSize: options.batchSize ?? 64,
          },
        }
      : {}),
  });
}

describe("WorkspaceKnowledge", () => {
  describe("upsert", () => {
    it("creates the workspace, chunks each document and answers the counts", async () => {
      const service = knowledge();
      expect(await pushed(service, { ...alice, documents: [billing, readme] })).toEqual({
        workspaceId: "ws",
        upserted: 2,
        unchanged: 0,
        deleted: 0,
        chunks: 2,
      });
      expect(await service.get(alice)).toMatchObject({
        successful: true,
        result: { documents: 2, chunks: 2 },
      });
    });

    it("leaves a document whose content is unchanged as it was: same chunks, nothing embedded again", async () => {
      const embedder = new CountingEmbedder();
      const service = knowledge({ embedder });
      await service.upsert({ ...alice, documents: [billing, readme] });
      const before = await service.search({ ...alice, query: "InvoiceManager", limit: 8 });
      const embedded = embedder.batches.flat().length;
      expect(await pushed(service, { ...alice, documents: [billing, readme] })).toMatchObject({
        upserted: 0,
        unchanged: 2,
        chunks: 2,
      });
      // Only the query was embedded again, no chunk.
      await service.search({ ...alice, query: "InvoiceManager", limit: 8 });
      expect(embedder.batches.flat().length).toBe(embedded + 1);
      expect(await service.search({ ...alice, query: "InvoiceManager", limit: 8 })).toEqual(before);
    });

    it("cuts only the documents whose content changed: pushing them unchanged again mints no chunk", async () => {
      const minted: string[] = [];
      const service = knowledge({ minted });
      await service.upsert({ ...alice, documents: [billing, readme] });
      expect(minted).toHaveLength(2);
      expect(await pushed(service, { ...alice, documents: [billing, readme] })).toMatchObject({
        upserted: 0,
        unchanged: 2,
      });
      expect(minted).toHaveLength(2);
      const changed = { ...readme, contents: `${readme.contents}\n\nNow with parcels.` };
      expect(await pushed(service, { ...alice, documents: [billing, changed, shipping] })).toEqual({
        workspaceId: "ws",
        upserted: 2,
        unchanged: 1,
        deleted: 0,
        chunks: 3,
      });
      expect(minted).toHaveLength(4);
    });

    it("cuts a document after all when another push changed it after its hash was read", async () => {
      let other: WorkspaceKnowledge | undefined;
      // Between this push's read of the hashes and its write, another push changes the billing document.
      class RacingIndex extends InMemoryWorkspaceIndex {
        override async documentHashes(key: WorkspaceKey, paths: string[]) {
          const hashes = await super.documentHashes(key, paths);
          const racer = other;
          other = undefined;
          await racer?.upsert({ ...alice, documents: [{ ...billing, contents: "export const v2 = 2;" }] });
          return hashes;
        }
      }
      const racing = new RacingIndex();
      const service = knowledge({ index: racing });
      await service.upsert({ ...alice, documents: [billing] });
      other = knowledge({ index: racing });
      expect(await pushed(service, { ...alice, documents: [billing, readme] })).toEqual({
        workspaceId: "ws",
        upserted: 2,
        unchanged: 0,
        deleted: 0,
        chunks: 2,
      });
      // This push's content won, cut and stored whole.
      const found = await service.search({
        ...alice,
        query: "InvoiceManager v2",
        ragScope: [{ key: "path", operator: "==", values: [billing.path] }],
        limit: 8,
      });
      expect(found.successful && found.result.map((chunk) => chunk.text)).toEqual([billing.contents]);
    });

    it("re-chunks a changed document, and a document re-pushed under another language", async () => {
      const service = knowledge();
      await service.upsert({ ...alice, documents: [billing] });
      const changed = { ...billing, contents: `${billing.contents}\n// v2` };
      expect(await pushed(service, { ...alice, documents: [changed] })).toMatchObject({
        upserted: 1,
        unchanged: 0,
      });
      expect(
        await pushed(service, { ...alice, documents: [{ ...changed, language: "javascript" }] }),
      ).toMatchObject({ upserted: 1 });
      const found = await service.search({ ...alice, query: "InvoiceManager", limit: 8 });
      expect(found.successful && found.result.map((chunk) => chunk.language)).toEqual(["javascript"]);
    });

    it("re-indexes a document re-pushed with the same contents under other tags, repo or metadata", async () => {
      const service = knowledge();
      await service.upsert({ ...alice, documents: [billing] });
      const retagged = { ...billing, tags: ["payments"], metadata: { owner: "team-a" } };
      expect(await pushed(service, { ...alice, documents: [retagged] })).toMatchObject({
        upserted: 1,
        unchanged: 0,
      });
      expect(await pushed(service, { ...alice, documents: [retagged] })).toMatchObject({ unchanged: 1 });
      const byTag = (tag: string) =>
        service.search({
          ...alice,
          query: "invoice",
          ragScope: [{ key: "tag", operator: "==", values: [tag] }],
          limit: 8,
        });
      const payments = await byTag("payments");
      const billingTag = await byTag("billing");
      expect(payments.successful && payments.result.map((chunk) => chunk.path)).toEqual([billing.path]);
      expect(billingTag.successful && billingTag.result).toEqual([]);
    });

    it("replace: true deletes the documents not in the set", async () => {
      const service = knowledge();
      await service.upsert({ ...alice, documents: [billing, readme, shipping] });
      expect(await pushed(service, { ...alice, documents: [readme], replace: true })).toEqual({
        workspaceId: "ws",
        upserted: 0,
        unchanged: 1,
        deleted: 2,
        chunks: 1,
      });
    });

    it("embeds only the inserted chunks, in batches", async () => {
      const embedder = new CountingEmbedder();
      const service = knowledge({ embedder, batchSize: 2 });
      await service.upsert({ ...alice, documents: [billing, readme, shipping] });
      expect(embedder.batches.map((batch) => batch.length)).toEqual([2, 1]);
      await service.upsert({
        ...alice,
        documents: [billing, readme, { ...shipping, contents: "def other():\n    pass" }],
      });
      expect(embedder.batches.map((batch) => batch.length)).toEqual([2, 1, 1]);
      expect(embedder.batches.at(-1)).toEqual(["def other():\n    pass"]);
    });

    it("keeps each embeddings request's usage: a push's outside any session, a turn's query as its session's", async () => {
      const { usage } = inMemorySessionStores(new ManualClock());
      const service = knowledge({ embedder: new CountingEmbedder(), batchSize: 2, usage });
      await service.upsert({ ...alice, documents: [billing, readme, shipping] });
      await service.retrieve({ ...alice, text: "invoice", scope: [], boost: {}, limit: 8, ...asking });
      const day = { from: new Date(Date.UTC(2000, 0, 1)), to: new Date(Date.UTC(2100, 0, 1)) };
      const sums = await usage.sumUsage({
        principal: "alice",
        ...day,
        groupBy: "session",
        page: { limit: 10 },
      });
      const pushedChars = [billing, readme, shipping].reduce(
        (sum, document) => sum + document.contents.length,
        0,
      );
      expect(
        sums.map(({ key, provider, model, inputTokens, outputTokens, llmCalls }) => ({
          key,
          provider,
          model,
          inputTokens,
          outputTokens,
          llmCalls,
        })),
      ).toEqual([
        {
          key: "",
          provider: "hashing",
          model: "hashed-words",
          inputTokens: pushedChars,
          outputTokens: 0,
          llmCalls: 2,
        },
        {
          key: "s-1",
          provider: "hashing",
          model: "hashed-words",
          inputTokens: "invoice".length,
          outputTokens: 0,
          llmCalls: 1,
        },
      ]);
      expect(await usage.sumUsage({ principal: "bob", ...day, groupBy: "model" })).toEqual([]);
    });

    it("fails with PROVIDER_ERROR when the embedder fails, keeping none of the changed documents", async () => {
      const broken: Embedder = {
        id: "broken",
        embed: async () => {
          throw new Error("rate limited");
        },
      };
      const service = knowledge({ embedder: broken });
      expect(await service.upsert({ ...alice, documents: [readme] })).toEqual({
        successful: false,
        errors: [
          {
            code: "PROVIDER_ERROR",
            message:
              "Embedding with hashed-words failed: rate limited. The 1 new or changed document(s) were not kept; push them again.",
            details: { model: "hashed-words", paths: ["README.md"] },
          },
        ],
        warnings: [],
      });
      // Not kept, so pushing it again is not "unchanged": it is chunked and embedded then.
      expect(await service.get(alice)).toMatchObject({ result: { documents: 0, chunks: 0 } });
    });
  });

  describe("search", () => {
    it("ranks lexically by code-aware terms, best first, within the limit", async () => {
      const service = knowledge();
      await service.upsert({ ...alice, documents: [billing, readme, shipping] });
      const found = await service.search({
        ...alice,
        query: "How is the invoice manager total computed?",
        limit: 2,
      });
      if (!found.successful) throw new Error(found.errors[0].message);
      expect(found.result.map((chunk) => chunk.path)).toEqual([
        "src/billing/invoice-manager.ts",
        "README.md",
      ]);
      expect(found.result[0]).toMatchObject({ startLine: 1, endLine: 5, language: "typescript" });
    });

    it("filters by ragScope", async () => {
      const service = knowledge();
      await service.upsert({ ...alice, documents: [billing, readme] });
      const found = await service.search({
        ...alice,
        query: "invoice",
        ragScope: [{ key: "tag", operator: "==", values: ["billing"] }],
        limit: 8,
      });
      expect(found.successful && found.result.map((chunk) => chunk.path)).toEqual([
        "src/billing/invoice-manager.ts",
      ]);
    });

    it("answers an empty list for a query of stop words alone", async () => {
      const service = knowledge();
      await service.upsert({ ...alice, documents: [readme] });
      expect(await service.search({ ...alice, query: "how is the", limit: 8 })).toEqual({
        successful: true,
        result: [],
        errors: [],
        warnings: [],
      });
    });

    it("fuses lexical and vector rankings by reciprocal rank when embeddings are configured", async () => {
      const service = knowledge({ embedder: new CountingEmbedder() });
      await service.upsert({ ...alice, documents: [billing, readme, shipping] });
      const found = await service.search({ ...alice, query: "ship parcel address", limit: 3 });
      if (!found.successful) throw new Error(found.errors[0].message);
      expect(found.result[0]?.path).toBe("src/shipping/parcel.py");
      // Found first by both rankings: 1/61 + 1/61.
      expect(found.result[0]?.score).toBeCloseTo(2 / 61, 10);
    });
  });

  describe("principals and unknown workspaces", () => {
    it("answers another principal's workspace exactly as an unknown one, on every method", async () => {
      const service = knowledge();
      await service.upsert({ ...alice, documents: [billing] });
      const notFound = {
        successful: false,
        errors: [
          {
            code: "WORKSPACE_NOT_FOUND",
            message: 'No workspace "ws" exists; push documents to create it.',
            details: { workspaceId: "ws" },
          },
        ],
        warnings: [],
      };
      expect(await service.get(bob)).toEqual(notFound);
      expect(await service.search({ ...bob, query: "invoice", limit: 8 })).toEqual(notFound);
      expect(await service.removeDocuments(bob, [billing.path])).toEqual(notFound);
      expect(await service.drop(bob)).toEqual(notFound);
      expect(
        await service.retrieve({ ...bob, text: "invoice", scope: [], boost: {}, limit: 8, ...asking }),
      ).toEqual({
        type: "unknown_workspace",
      });
      expect(await service.get(alice)).toMatchObject({ successful: true, result: { documents: 1 } });
    });

    it("answers an id that breaks the rule for a workspace id as unknown, and refuses it for a push", async () => {
      const service = knowledge();
      for (const workspaceId of ["ws\u0000", "ws\uD800", "w".repeat(257)]) {
        const key = { principal: "alice", workspaceId };
        const notFound = { successful: false, errors: [{ code: "WORKSPACE_NOT_FOUND" }] };
        expect(await service.get(key)).toMatchObject(notFound);
        expect(await service.search({ ...key, query: "invoice", limit: 8 })).toMatchObject(notFound);
        expect(await service.removeDocuments(key, [billing.path])).toMatchObject(notFound);
        expect(await service.drop(key)).toMatchObject(notFound);
        expect(
          await service.retrieve({ ...key, text: "invoice", scope: [], boost: {}, limit: 8, ...asking }),
        ).toEqual({
          type: "unknown_workspace",
        });
        const refused = await service.upsert({ ...key, documents: [billing] });
        expect(refused).toMatchObject({
          successful: false,
          errors: [{ code: "VALIDATION_FAILED", details: { fields: [{ path: "workspaceId" }] } }],
        });
      }
    });

    it("removes documents by path and drops the whole workspace", async () => {
      const service = knowledge();
      await service.upsert({ ...alice, documents: [billing, readme] });
      expect(await service.removeDocuments(alice, [readme.path, "missing.md"])).toMatchObject({
        result: { deleted: 1 },
      });
      expect(await service.drop(alice)).toMatchObject({ result: { workspaceId: "ws" } });
      expect(await service.get(alice)).toMatchObject({ successful: false });
    });
  });

  describe("retrieve (the ContextRetriever of user turns)", () => {
    it("tells an empty index from no match", async () => {
      const service = knowledge();
      await service.upsert({ ...alice, documents: [readme] });
      const query = { ...alice, scope: [], boost: {}, limit: 8, ...asking };
      expect(await service.retrieve({ ...query, text: "zebra" })).toEqual({ type: "found", chunks: [] });
      await service.removeDocuments(alice, [readme.path]);
      expect(await service.retrieve({ ...query, text: "shop" })).toEqual({ type: "empty_index" });
    });
  });
});
